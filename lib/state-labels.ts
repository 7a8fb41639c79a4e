// What a person reads for a session state or outcome id. Workflow states are data (users
// define their own), so the built-in ones have a written label and any other id reads as
// words ("code_review" → "Code review"); the id itself stays on the badge's title and in
// its data-state attribute for people who need it (and for tests).
const LABELS: Readonly<Record<string, string>> = {
  init: "Starting",
  start: "Starting",
  planning: "Planning",
  proposal_coder: "Coder proposing",
  proposal_reviewer: "Reviewer weighing in",
  proposal_tester: "Tester weighing in",
  awaiting_operator_confirm: "Waiting for your confirm",
  building: "Building",
  executing: "Executing",
  reviewing: "Reviewing",
  testing: "Testing",
  running_tests: "Running tests",
  review_schema_invalid: "Review unreadable",
  max_iterations_reached: "Out of iterations",
  budget_exhausted: "Out of budget",
  no_quorum: "No quorum",
  agent_failed: "Agent failed",
  approved: "Approved",
  completed: "Completed",
  done: "Done",
  failed: "Failed",
  cancelled: "Cancelled",
  aborted: "Aborted",
  terminated: "Terminated",
  // A bake-off (docs/bake-off.md): the parent while its contenders build, and how each ends.
  bake_off: "Bake-off running",
  winner_chosen: "Winner chosen",
  bake_off_dismissed: "Bake-off dismissed",
  not_chosen: "Not chosen",
  "(none)": "None yet",
};

export function stateLabel(state: string): string {
  const known = LABELS[state];
  if (known) return known;
  const words = state.replace(/[_-]+/g, " ").trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : state;
}
