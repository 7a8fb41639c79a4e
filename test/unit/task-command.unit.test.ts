// `/task <prompt>` in a conversation (server/conversations/task-command.ts, req W13): which
// messages are the command, and the prompt the task gets: the person's, then the conversation's
// latest messages, within CONTEXT_CHARS and the prompt's own limit, the server's secrets redacted.
import { afterEach, describe, expect, it } from "vitest";
import { CONTEXT_CHARS, CONTEXT_MESSAGES, parseTaskCommand, promptWithContext } from "../../server/conversations/task-command";
import { isAppError } from "../../server/errors";
import { ZStartTaskInput } from "../../server/tasks/commands";

const conversation = { id: "c-0123456789ab", title: "Orders schema" };

describe("parseTaskCommand", () => {
  it("reads the prompt after /task (a space or a line break after the word), trimmed", () => {
    expect(parseTaskCommand("/task split slugify()")).toEqual({ prompt: "split slugify()" });
    expect(parseTaskCommand("  /task   add a test  ")).toEqual({ prompt: "add a test" });
    expect(parseTaskCommand("/task\nline one\nline two")).toEqual({ prompt: "line one\nline two" });
  });

  it("anything else is an ordinary message", () => {
    for (const text of ["hello", "/tasks are fun", "@ada /task this", "a /task in the middle", "/taskfix it", "/Task x"])
      expect(parseTaskCommand(text), text).toBeNull();
  });

  it("/task without a prompt is refused with the field named", () => {
    for (const text of ["/task", "/task   ", "  /task\n\n  "]) {
      let refused: unknown;
      try {
        parseTaskCommand(text);
      } catch (err) {
        refused = err;
      }
      expect(isAppError(refused, "INVALID_INPUT"), text).toBe(true);
      expect(refused).toMatchObject({
        message: "/task needs a prompt: /task <what the task is>",
        details: { fieldErrors: { text: ["/task needs a prompt: /task <what the task is>"] } },
      });
    }
  });
});

describe("promptWithContext", () => {
  const saved = process.env.NEXTAUTH_SECRET;
  afterEach(() => {
    if (saved === undefined) delete process.env.NEXTAUTH_SECRET;
    else process.env.NEXTAUTH_SECRET = saved;
  });

  it("the prompt, then the conversation named and its messages oldest first, each saying who spoke", () => {
    const prompt = promptWithContext("Split slugify()", conversation, [
      { from: "operator", text: "@ada how do we split it?" },
      { from: "system", text: "@ada: by words first." },
    ]);
    expect(prompt).toBe(
      'Split slugify()\n\n## Context from conversation "Orders schema" (c-0123456789ab)\n\nIts latest messages, oldest first:\n' +
        "\n- a person: @ada how do we split it?\n- @ada: by words first.",
    );
  });

  it("no messages: the prompt alone", () => {
    expect(promptWithContext("Split slugify()", conversation, [])).toBe("Split slugify()");
  });

  it("the latest CONTEXT_MESSAGES at most, within CONTEXT_CHARS, each message cut", () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ from: "operator" as const, text: `message ${i}` }));
    const prompt = promptWithContext("p", conversation, many);
    expect(prompt).not.toContain("message 29\n");
    expect(prompt).toContain(`message ${50 - CONTEXT_MESSAGES}\n`);
    expect(prompt.endsWith("message 49")).toBe(true);

    const long = Array.from({ length: 10 }, (_, i) => ({ from: "operator" as const, text: `${i}`.repeat(5_000) }));
    const cut = promptWithContext("p", conversation, long);
    expect(cut.length - "p".length).toBeLessThanOrEqual(CONTEXT_CHARS + 200);
    expect(cut).toContain(`${"9".repeat(2_000)} […]`);
    expect(cut).not.toContain("9".repeat(2_001));
  });

  it("a long prompt leaves less room: the whole stays within the task prompt's limit, and the latest messages go first", () => {
    const max = ZStartTaskInput.shape.prompt.maxLength!;
    const prompt = "x".repeat(max - 1_000);
    const withContext = promptWithContext(prompt, conversation, [
      { from: "operator", text: "old ".repeat(300) },
      { from: "operator", text: "newest" },
    ]);
    expect(withContext.length).toBeLessThanOrEqual(max);
    // The one older message (1,200 characters) does not fit in the 1,000 left; the newest does.
    expect(withContext.endsWith("\n- a person: newest")).toBe(true);
    expect(withContext.includes("old old")).toBe(false);
    expect(ZStartTaskInput.safeParse({ projectId: "p", prompt: withContext }).success).toBe(true);
    // No room at all: the prompt alone.
    expect(promptWithContext("x".repeat(max), conversation, [{ from: "operator", text: "hi" }]) === "x".repeat(max)).toBe(true);
  });

  it("the server's secrets in a message are redacted", () => {
    process.env.NEXTAUTH_SECRET = "a-server-secret-never-to-agents-4242";
    const prompt = promptWithContext("p", conversation, [{ from: "operator", text: "the key is a-server-secret-never-to-agents-4242" }]);
    expect(prompt).toContain("the key is [redacted NEXTAUTH_SECRET]");
    expect(prompt).not.toContain("4242");
  });
});
