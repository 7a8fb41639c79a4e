// Lint: typescript-eslint's recommended rules on all our TypeScript, strict about `any`.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";
import layers from "./eslint.layers.mjs";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      ".next/",
      ".data/",
      "server/db/generated/",
      "bench/results/",
      "next-env.d.ts",
      "coverage/",
      "reports/",
      ".stryker-tmp/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    // Scripts and the CLI talk to a server over HTTP: they may use the server's types, never
    // load its modules (database, secrets, next-auth) at run time.
    files: ["lib/client/**/*.ts", "cli/**/*.ts", "docs/examples/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              // This repository's server/ (relative or by alias), not a package's `server` folder (an MCP SDK's).
              group: ["./server/**", "../server/**", "../../server/**", "../../../server/**", "@/server/**", "../server", "../../server"],
              allowTypeImports: true,
              message: "clients import server code as types only (`import type`)",
            },
          ],
        },
      ],
    },
  },
  {
    // Every child process goes through server/process (no shell, a minimal environment, the
    // whole tree ended on cancel or deadline, observed and sandboxable in one place). Not
    // test/ (it spawns what it tests), scripts/ and bench/: they start the app's own trusted
    // processes (web, runner, Prisma, git rev-parse) with the operator's environment on purpose.
    files: ["**/*.{ts,tsx}"],
    ignores: ["server/process/**", "test/**", "scripts/**", "bench/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: ["execa", "child_process", "node:child_process"].map((name) => ({
            name,
            message: "start child processes through server/process (spawnProcess, runProcess): see docs/architecture.md",
          })),
        },
      ],
    },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
  ...layers,
  // Formatting is Prettier's (`npm run format`, checked by `npm run lint`): no stylistic lint rules.
  prettier,
);
