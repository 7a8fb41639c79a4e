// Writes an export to a folder (the CLI's `--out <dir>`). The folder must be new or empty,
// every name is checked before anything is written, and no file is ever overwritten, so an
// export cannot write outside its folder or clobber what was there.
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "../errors";
import { assertExportPath } from "./paths";
import type { ExportFiles } from "./types";

async function prepareOutDir(outDir: string): Promise<void> {
  const existing = await fs.stat(outDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return null;
    throw err;
  });
  if (!existing) {
    await fs.mkdir(outDir, { recursive: true });
    return;
  }
  if (!existing.isDirectory()) throw new AppError("PRECONDITION_FAILED", `${outDir} exists and is not a directory`);
  if ((await fs.readdir(outDir)).length > 0)
    throw new AppError("PRECONDITION_FAILED", `${outDir} is not empty: export into a new or empty directory`);
}

/** Writes every file under `outDir`; returns the absolute paths written, in order. */
export async function writeExportDir(files: ExportFiles, outDir: string): Promise<string[]> {
  for (const name of files.keys()) assertExportPath(name);
  const root = path.resolve(outDir);
  await prepareOutDir(root);
  const written: string[] = [];
  for (const [name, content] of files) {
    const target = path.join(root, ...name.split("/"));
    // Checked names cannot climb out; this guards the join itself.
    if (!target.startsWith(root + path.sep)) throw new AppError("INVALID_INPUT", `export file name ${JSON.stringify(name)} leaves ${root}`);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, content, { flag: "wx" });
    written.push(target);
  }
  return written;
}
