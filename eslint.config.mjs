// Lint: typescript-eslint's recommended rules on all our TypeScript, strict about `any`.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";
import layers from "./eslint.layers.mjs";

/**
 * A cast that tells the compiler nothing is checked (`x as never`, `x as unknown as T`) is a
 * missing schema or a missing type parameter (docs/architecture.md, "Where the code is"): refused
 * in the application's code. A test may still build a deliberately wrong value with one.
 */
const noBlindCasts = [
  {
    selector: "TSAsExpression[typeAnnotation.type='TSNeverKeyword']",
    message: "`as never` hides a type error: give the value its type (a schema, a type parameter)",
  },
  {
    selector: "TSAsExpression[expression.type='TSAsExpression'][expression.typeAnnotation.type='TSUnknownKeyword']",
    message: "`as unknown as` hides a type error: parse the value with a schema or type it properly",
  },
];

const childProcesses = ["execa", "child_process", "node:child_process"].map((name) => ({
  name,
  message: "start child processes through server/process (spawnProcess, runProcess): see docs/architecture.md",
}));

/** Links go through AppLink (components/app-link.tsx): Next.js would prefetch every dynamic page in view. */
const nextLink = { name: "next/link", message: "use AppLink (components/app-link.tsx): no page is prefetched ahead of a click" };

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
    rules: { "no-restricted-imports": ["error", { paths: [...childProcesses, nextLink] }] },
  },
  {
    files: ["components/app-link.tsx"],
    rules: { "no-restricted-imports": ["error", { paths: childProcesses }] },
  },
  {
    files: ["server/**/*.ts", "cli/**/*.ts", "lib/**/*.{ts,tsx}", "app/**/*.ts"],
    rules: { "no-restricted-syntax": ["error", ...noBlindCasts] },
  },
  {
    // WCAG AA: no text under 12 px, and no light grey text that fails
    // 4.5:1 on our surfaces (zinc-300/400 on white; zinc-500/600 on the dark panels). And no
    // blind casts, as everywhere (this rule's list replaces the one above for these files).
    files: ["app/**/*.tsx", "components/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...noBlindCasts,
        ...["Literal", "TemplateElement"].flatMap((node) => {
          const value = node === "Literal" ? "value" : "value.raw";
          return [
            {
              selector: `${node}[${value}=/text-\\[(?:[0-9]|1[01])(?:\\.[0-9]+)?px\\]/]`,
              message: "text under 12 px: use text-xs or larger (WCAG AA)",
            },
            {
              selector: `${node}[${value}=/(?:^|[\\s"'\x60])text-zinc-[34]00(?![0-9\\/])/]`,
              message: "grey text under 4.5:1 on white: use text-zinc-500 or darker",
            },
            {
              selector: `${node}[${value}=/^(?![\\s\\S]*dark:text-)[\\s\\S]*(?:^|\\s)text-zinc-[567]00(?![0-9\\/-])/]`,
              message: "grey text without a dark variant stays dark grey on the dark surfaces: add dark:text-zinc-400 (or 300)",
            },
            {
              selector: `${node}[${value}=/dark:text-zinc-[56]00(?![0-9\\/])/]`,
              message: "grey text under 4.5:1 on the dark surfaces: use dark:text-zinc-400 or lighter",
            },
          ];
        }),
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
