// Reading secrets without putting them on the command line (where `ps` and shell history
// see them): from stdin when piped, or typed at a terminal without echo.
import readline from "node:readline";
import { CliError } from "./errors";

/** All of stdin, trimmed (`echo "$PASSWORD" | catcafe login --password-stdin`). */
export async function readStdin(what: string): Promise<string> {
  if (process.stdin.isTTY) throw new CliError(`${what} is read from stdin, but stdin is a terminal: pipe it in`);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
  if (!text) throw new CliError(`${what}: stdin was empty`);
  return text;
}

/**
 * Stops `rl` echoing what is typed: readline writes the prompt and each keystroke through its
 * `_writeToOutput` method (not in Node's types or docs, but what muted prompts have long
 * replaced), so it becomes one that writes the prompt alone. False when this readline has none.
 */
export function muteEcho(rl: readline.Interface, question: string, write: (text: string) => void): boolean {
  if (!("_writeToOutput" in rl) || typeof rl._writeToOutput !== "function") return false;
  rl._writeToOutput = (text: string) => {
    if (text.includes(question)) write(question);
  };
  return true;
}

/** Asks on the terminal; `secret` hides what is typed. Refuses when there is no terminal. */
export async function ask(question: string, options: { secret?: boolean; missing: string }): Promise<string> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) throw new CliError(options.missing);
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    const answer = new Promise<string>((resolve) => rl.question(question, resolve));
    // Never echo a secret: without the hook, refuse rather than show it.
    if (options.secret && !muteEcho(rl, question, (text) => process.stderr.write(text))) throw new CliError(options.missing);
    const value = (await answer).trim();
    if (options.secret) process.stderr.write("\n");
    if (!value) throw new CliError(options.missing);
    return value;
  } finally {
    rl.close();
  }
}
