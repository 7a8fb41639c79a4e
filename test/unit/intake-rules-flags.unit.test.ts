// `catcafe intake rules` (cli/commands/intake.ts, docs/intake.md): the flags applied over the
// saved rules, and what the settings' schema makes of them — a bake-off trigger's contenders.
import { describe, expect, it } from "vitest";
import { rulesFromFlags } from "../../cli/commands/intake";
import { ZIntakeSettings } from "../../server/config/schemas";

const saved = { provider: "github", repository: "acme/shop", triggers: { label: { name: "catcafe" } } };

describe("catcafe intake rules --bake-off", () => {
  it("makes the trigger a bake-off of the named contenders, which the settings take", () => {
    const rules = rulesFromFlags(saved, { bakeOff: ["label=claude-coder, codex-coder:o3"] });
    expect(rules.triggers).toEqual({
      label: {
        name: "catcafe",
        workflow: "bake_off",
        bakeOff: { contenders: [{ coder: "claude-coder" }, { coder: "codex-coder", model: "o3" }] },
      },
    });
    expect(ZIntakeSettings.parse(rules).triggers.label).toMatchObject({ workflow: "bake_off", autoConfirm: false });
  });

  it("another workflow drops the contenders; a bake-off without any is a usage error", () => {
    const bake = rulesFromFlags(saved, { bakeOff: ["label=a,b"] });
    expect(rulesFromFlags(bake, { workflow: ["label=forge"] }).triggers).toEqual({ label: { name: "catcafe", workflow: "forge" } });
    expect(() => rulesFromFlags(saved, { bakeOff: ["label"] })).toThrow(
      "--bake-off label: name the contenders, as trigger=coder,coder:model",
    );
    expect(() => rulesFromFlags(saved, { bakeOff: ["issue=a,b"] })).toThrow("--bake-off: issue is not a trigger");
  });
});
