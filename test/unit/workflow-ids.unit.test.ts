// The workflow ids the CLI's `sessions list --workflow` help names are the server's.
import { describe, expect, it } from "vitest";
import { SESSION_WORKFLOW_IDS } from "../../lib/workflow-ids";
import { CONVERSATION_WORKFLOW } from "../../server/conversations/record";
import { BUILTIN_WORKFLOWS } from "../../server/task-engine";

describe("SESSION_WORKFLOW_IDS", () => {
  it("is every built-in workflow and conversations", () => {
    expect([...SESSION_WORKFLOW_IDS].sort()).toEqual([...Object.keys(BUILTIN_WORKFLOWS), CONVERSATION_WORKFLOW].sort());
  });
});
