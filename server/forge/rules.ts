// The stage rules checked by code, not left to the critic (req F3, F11): counts,
// forbidden kinds of requirement, component and task, dependency cycles (depth-first
// search, the cycle named), feature coverage, and no tests unless the PRD asks. Each
// broken rule is a blocking finding with a stable id, so the anti-loop sees it recur.
import { ARTIFACT_PATHS, type CodeMetadata, type DesignSpec, type Features, type Plan, type Requirements } from "./artifacts";

export interface RuleFinding {
  id: string;
  message: string;
}

/** What the rules read: the idea, the parsed JSON artifacts so far, and (Coding) the files changed. */
export interface RuleInput {
  idea: string;
  json: Partial<Record<string, unknown>>;
  changedFiles?: string[];
}

const NON_CORE_REQUIREMENT: Array<[topic: string, pattern: RegExp]> = [
  ["performance", /\b(performance|latency|throughput|benchmark\w*|optimi[sz]\w*|scalab\w*)\b/i],
  ["CI", /\b(CI|CI\/CD|continuous (integration|delivery|deployment)|pipelines?)\b/],
  ["monitoring", /\b(monitor\w*|observability|metrics|alert\w*|telemetry|dashboards?)\b/i],
];
const HEAVY_COMPONENT = /\b(micro-?services?|cach(e|es|ing)|redis|memcached|queues?|kafka|rabbitmq|message broker|pub\/?sub)\b/i;
const TEST_OR_DEPLOY_TASK = /\b(tests?|testing|unit tests?|deploy\w*|release|ci|ci\/cd|docker\w*)\b/i;
const TEST_FILE = /(^|\/)(tests?|__tests__|spec)\/|\.(test|spec)\.[a-z]+$|(^|\/)test_[^/]+\.py$|_test\.(go|py)$/i;
const ASKS_FOR_TESTS = /\btests?\b|\btesting\b/i;

export function prdRules({ idea, json }: RuleInput): RuleFinding[] {
  const findings: RuleFinding[] = [];
  const requirements = json[ARTIFACT_PATHS.requirements] as Requirements | undefined;
  const features = json[ARTIFACT_PATHS.features] as Features | undefined;
  if (requirements) {
    const n = requirements.requirements.length;
    if (n < 3 || n > 6)
      findings.push({ id: "rule:prd.requirements-count", message: `the PRD has ${n} core requirements; the rule is 3 to 6` });
    for (const r of requirements.requirements) {
      for (const [topic, pattern] of NON_CORE_REQUIREMENT) {
        if (pattern.test(`${r.title} ${r.description}`) && !pattern.test(idea))
          findings.push({
            id: `rule:prd.non-core.${r.id}`,
            message: `requirement ${r.id} ("${r.title}") is about ${topic}, which the idea does not ask for: leave it out`,
          });
      }
    }
  }
  if (features) {
    const n = features.features.length;
    if (n < 2 || n > 4) findings.push({ id: "rule:prd.features-count", message: `the PRD has ${n} core features; the rule is 2 to 4` });
    const known = new Set(requirements?.requirements.map((r) => r.id) ?? []);
    for (const f of features.features) {
      const unknown = requirements ? f.requirements.filter((id) => !known.has(id)) : [];
      if (unknown.length)
        findings.push({
          id: `rule:prd.feature-requirements.${f.id}`,
          message: `feature ${f.id} names unknown requirements: ${unknown.join(", ")}`,
        });
    }
  }
  return findings;
}

export function designRules({ json }: RuleInput): RuleFinding[] {
  const spec = json[ARTIFACT_PATHS.designSpec] as DesignSpec | undefined;
  if (!spec) return [];
  const findings: RuleFinding[] = [];
  const n = spec.components.length;
  if (n < 2 || n > 4) findings.push({ id: "rule:design.components-count", message: `the design has ${n} components; the rule is 2 to 4` });
  for (const c of spec.components) {
    const match = HEAVY_COMPONENT.exec(`${c.name} ${c.responsibility} ${c.technology ?? ""}`);
    if (match && !c.justification)
      findings.push({
        id: `rule:design.heavy-component.${c.id}`,
        message: `component ${c.id} ("${c.name}") is a ${match[0].toLowerCase()}: prefer a monolith and simple storage, or say why it is needed (justification)`,
      });
  }
  return findings;
}

/**
 * A dependency cycle among `tasks`, found by depth-first search: the ids along it, the first
 * repeated at the end (`a → b → c → a`); null when there is none.
 */
export function findCycle(tasks: ReadonlyArray<{ id: string; dependsOn: readonly string[] }>): string[] | null {
  const deps = new Map(tasks.map((t) => [t.id, t.dependsOn]));
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === "done") return null;
    if (state.get(id) === "visiting") return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, "visiting");
    stack.push(id);
    for (const next of deps.get(id) ?? []) {
      if (!deps.has(next)) continue;
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(id, "done");
    return null;
  };
  for (const t of tasks) {
    const cycle = visit(t.id);
    if (cycle) return cycle;
  }
  return null;
}

export function planRules({ json }: RuleInput): RuleFinding[] {
  const plan = json[ARTIFACT_PATHS.plan] as Plan | undefined;
  if (!plan) return [];
  const findings: RuleFinding[] = [];
  const n = plan.tasks.length;
  if (n < 5 || n > 12) findings.push({ id: "rule:plan.tasks-count", message: `the plan has ${n} core tasks; the rule is 5 to 12` });
  const ids = new Set(plan.tasks.map((t) => t.id));
  for (const t of plan.tasks) {
    const unknown = t.dependsOn.filter((d) => !ids.has(d));
    if (unknown.length)
      findings.push({
        id: `rule:plan.unknown-dependency.${t.id}`,
        message: `task ${t.id} depends on unknown tasks: ${unknown.join(", ")}`,
      });
    if (TEST_OR_DEPLOY_TASK.test(t.title))
      findings.push({
        id: `rule:plan.test-or-deploy.${t.id}`,
        message: `task ${t.id} ("${t.title}") is a test or deployment task: the plan has none`,
      });
  }
  if (n > 1 && !plan.tasks.some((t) => t.dependsOn.length > 0))
    findings.push({ id: "rule:plan.no-dependencies", message: "no task depends on another: say which tasks come first" });
  const cycle = findCycle(plan.tasks);
  if (cycle) findings.push({ id: "rule:plan.cycle", message: `the tasks' dependencies form a cycle: ${cycle.join(" → ")}` });
  const features = json[ARTIFACT_PATHS.features] as Features | undefined;
  if (features) {
    const known = new Set(features.features.map((f) => f.id));
    for (const t of plan.tasks)
      if (!known.has(t.feature))
        findings.push({ id: `rule:plan.unknown-feature.${t.id}`, message: `task ${t.id} builds unknown feature ${t.feature}` });
    const covered = new Set(plan.tasks.map((t) => t.feature));
    const uncovered = features.features.filter((f) => !covered.has(f.id)).map((f) => f.id);
    if (uncovered.length)
      findings.push({
        id: "rule:plan.coverage",
        message: `no task builds feature${uncovered.length > 1 ? "s" : ""} ${uncovered.join(", ")}`,
      });
  }
  return findings;
}

/** The PRD asks for tests when a requirement says so. */
export function prdAsksForTests(json: RuleInput["json"]): boolean {
  const requirements = json[ARTIFACT_PATHS.requirements] as Requirements | undefined;
  return !!requirements?.requirements.some((r) => ASKS_FOR_TESTS.test(`${r.title} ${r.description}`));
}

export function codingRules({ json, changedFiles = [] }: RuleInput): RuleFinding[] {
  const findings: RuleFinding[] = [];
  const tests = changedFiles.filter((f) => TEST_FILE.test(f));
  if (tests.length && !prdAsksForTests(json))
    findings.push({ id: "rule:coding.unasked-tests", message: `the PRD asks for no tests, but the code adds ${tests.join(", ")}` });
  const plan = json[ARTIFACT_PATHS.plan] as Plan | undefined;
  const metadata = json[ARTIFACT_PATHS.codeMetadata] as CodeMetadata | undefined;
  if (plan && metadata) {
    const known = new Set(plan.tasks.map((t) => t.id));
    const unknown = metadata.tasks.filter((t) => !known.has(t.id)).map((t) => t.id);
    if (unknown.length)
      findings.push({ id: "rule:coding.unknown-tasks", message: `code_metadata.json names tasks the plan has not: ${unknown.join(", ")}` });
    const open = plan.tasks.filter((t) => metadata.tasks.find((m) => m.id === t.id)?.status !== "done").map((t) => t.id);
    if (open.length) findings.push({ id: "rule:coding.open-tasks", message: `planned tasks not done: ${open.join(", ")}` });
  }
  return findings;
}

export const STAGE_RULES: Partial<Record<string, (input: RuleInput) => RuleFinding[]>> = {
  prd: prdRules,
  design: designRules,
  plan: planRules,
  coding: codingRules,
};

/**
 * Task status changes cascade to their feature (req F3): a feature is done when all its
 * tasks are, in progress when any is started or done, pending otherwise.
 */
export function cascadeFeatureStatus(
  plan: Plan,
  taskStatus: ReadonlyArray<{ id: string; status: "pending" | "in_progress" | "done" }>,
): Array<{ id: string; status: "pending" | "in_progress" | "done"; tasks: number; done: number }> {
  const statusOf = new Map(taskStatus.map((t) => [t.id, t.status]));
  const byFeature = new Map<string, Array<"pending" | "in_progress" | "done">>();
  for (const t of plan.tasks) byFeature.set(t.feature, [...(byFeature.get(t.feature) ?? []), statusOf.get(t.id) ?? t.status]);
  return [...byFeature].map(([id, statuses]) => {
    const done = statuses.filter((s) => s === "done").length;
    const status = done === statuses.length ? "done" : statuses.some((s) => s !== "pending") ? "in_progress" : "pending";
    return { id, status, tasks: statuses.length, done };
  });
}
