// The files reply of an HTTP brain in a step that writes files (server/runner/files-reply.ts,
// docs/forge.md "Who can act in a stage"): what is read, and every way a reply breaks the
// format, each refused with the field and the problem named; and what a brain is told.
import { describe, expect, it } from "vitest";
import { filesReplyInstruction, MAX_REPLY_FILE_BYTES, MAX_REPLY_FILES, parseFilesReply } from "../../server/runner/files-reply";
import { forgeStepInput } from "../helpers/forge";

const reply = (value: unknown) => JSON.stringify(value);
const errorsOf = (text: string) => {
  const parsed = parseFilesReply(text);
  if (parsed.ok) throw new Error(`expected a refusal of ${text.slice(0, 200)}`);
  return parsed.errors;
};

describe("a valid files reply", () => {
  it("is read with its files in order and its summary", () => {
    const parsed = parseFilesReply(
      reply({
        files: [
          { path: ".forge/idea.md", content: "# Idea\n" },
          { path: "src/a b/ü.js", content: "" },
        ],
        summary: "Wrote it.",
      }),
    );
    expect(parsed).toEqual({
      ok: true,
      value: {
        files: [
          { path: ".forge/idea.md", content: "# Idea\n" },
          { path: "src/a b/ü.js", content: "" },
        ],
        summary: "Wrote it.",
      },
    });
  });

  it("may come inside one ```json fence, and without a summary or any file", () => {
    expect(parseFilesReply('```json\n{"files": [{"path": "x.md", "content": "x"}]}\n```')).toEqual({
      ok: true,
      value: { files: [{ path: "x.md", content: "x" }] },
    });
    expect(parseFilesReply('{"files": []}')).toEqual({ ok: true, value: { files: [] } });
  });
});

describe("a reply that breaks the format is refused, the field and the problem named", () => {
  it("not JSON: prose, prose around the JSON, a cut-off document", () => {
    expect(errorsOf("# Idea\n\nA word counter.")[0]).toMatch(/^not valid JSON: /);
    expect(errorsOf('Here you are:\n{"files": []}')[0]).toMatch(/^not valid JSON: /);
    expect(errorsOf('{"files": [{"path": "a.md", "content": "')[0]).toMatch(/^not valid JSON: /);
  });

  it("the wrong shape: no files, files not a list, a file not an object, a key too many", () => {
    expect(errorsOf(reply({ summary: "nothing" }))).toEqual([expect.stringMatching(/^files: .*expected array/)]);
    expect(errorsOf(reply({ files: { ".forge/idea.md": "x" } }))).toEqual([expect.stringMatching(/^files: .*expected array/)]);
    expect(errorsOf(reply({ files: [".forge/idea.md"] }))).toEqual([expect.stringMatching(/^files\.0: .*expected object/)]);
    expect(errorsOf(reply([{ path: "a", content: "b" }]))).toEqual([expect.stringMatching(/^\(root\): .*expected object/)]);
    expect(errorsOf(reply({ files: [], notes: "x" }))).toEqual([expect.stringMatching(/^\(root\): Unrecognized key.*"notes"/)]);
    expect(errorsOf(reply({ files: [{ path: "a.md", content: "x", mode: "0755" }] }))).toEqual([
      expect.stringMatching(/^files\.0: Unrecognized key.*"mode"/),
    ]);
  });

  it("a path or a content that is not a string, or missing", () => {
    expect(errorsOf(reply({ files: [{ path: 7, content: "x" }] }))).toEqual([expect.stringMatching(/^files\.0\.path: .*expected string/)]);
    expect(errorsOf(reply({ files: [{ path: "a.md", content: { text: "x" } }] }))).toEqual([
      expect.stringMatching(/^files\.0\.content: .*expected string/),
    ]);
    expect(errorsOf(reply({ files: [{ content: "x" }] }))).toEqual([expect.stringMatching(/^files\.0\.path: .*expected string/)]);
    expect(errorsOf(reply({ files: [{ path: "a.md" }] }))).toEqual([expect.stringMatching(/^files\.0\.content: .*expected string/)]);
    expect(errorsOf(reply({ files: [], summary: 3 }))).toEqual([expect.stringMatching(/^summary: .*expected string/)]);
  });

  it("a path that leaves the repository or cannot name a file in it", () => {
    const refusals: Array<[string, string]> = [
      ["", "must not be empty"],
      ["/etc/passwd", '"/etc/passwd" must be relative to the repository root, not absolute'],
      ["C:/x.md", '"C:/x.md" must be relative to the repository root, not absolute'],
      ["../outside.md", '"../outside.md" must not contain "." or ".." parts'],
      ["src/../../outside.md", '"src/../../outside.md" must not contain "." or ".." parts'],
      ["./src/a.js", '"./src/a.js" must not contain "." or ".." parts'],
      ["src//a.js", '"src//a.js" must not start or end with "/" or contain "//"'],
      ["src/", '"src/" must not start or end with "/" or contain "//"'],
      ["src\\a.js", '"src\\\\a.js" must use "/" between its parts, not "\\"'],
      [".git/hooks/pre-commit", '".git/hooks/pre-commit" must not be inside .git'],
      ["a\0b", "must not contain a NUL byte"],
      ["x".repeat(1025), "must be at most 1024 characters"],
    ];
    for (const [path, message] of refusals) {
      expect(errorsOf(reply({ files: [{ path, content: "x" }] })), path).toEqual([`files.0.path: ${message}`]);
    }
  });

  it("a path named twice", () => {
    const files = [
      { path: "a.md", content: "1" },
      { path: "b.md", content: "2" },
      { path: "a.md", content: "3" },
    ];
    expect(errorsOf(reply({ files }))).toEqual(['files.2.path: "a.md" is named again (first at files.0)']);
  });

  it("too large: a file's content, too many files, a summary", () => {
    expect(errorsOf(reply({ files: [{ path: "big.md", content: "é".repeat(MAX_REPLY_FILE_BYTES / 2 + 1) }] }))).toEqual([
      `files.0.content: must be at most ${MAX_REPLY_FILE_BYTES} bytes`,
    ]);
    const many = Array.from({ length: MAX_REPLY_FILES + 1 }, (_, i) => ({ path: `f${i}.md`, content: "" }));
    expect(errorsOf(reply({ files: many }))).toEqual([`files: at most ${MAX_REPLY_FILES} files in one reply`]);
    expect(errorsOf(reply({ files: [], summary: "s".repeat(4001) }))).toEqual(["summary: must be at most 4000 characters"]);
  });
});

describe("what a brain is told", () => {
  it("in a Forge stage: the format, the stage's artifacts to write and the globs it may write", () => {
    const text = filesReplyInstruction({ forge: forgeStepInput({ collect: [".forge/prd.md", ".forge/requirements.json"] }), agent: null });
    expect(text).toContain('{"files":[{"path":".forge/prd.md","content":"the file\'s whole new text"}],"summary":');
    expect(text).toContain("- Write: .forge/prd.md, .forge/requirements.json.");
    expect(text).toContain("- You may write only paths matching: .forge/prd.md (gitignore-style");
  });

  it("in a build: the executor's manifest when it has one, else no limit named", () => {
    expect(filesReplyInstruction({ agent: { manifest: { allowedFiles: ["src/**"] } } })).toContain(
      "- You may write only paths matching: src/**",
    );
    const free = filesReplyInstruction({ agent: { kind: "openai" } });
    expect(free).toContain('"path":"src/example.js"');
    expect(free).not.toContain("You may write only");
  });
});
