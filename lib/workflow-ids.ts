// The workflows a session can be of, by the id the sessions list filters on: the engine's
// built-ins (server/task-engine.ts BUILTIN_WORKFLOWS) and conversations
// (server/conversations/record.ts). A project's own workflows come on top. A unit test keeps
// this list equal to the server's.
export const SESSION_WORKFLOW_IDS = ["review_loop", "planning", "forge", "conversation"] as const;
