// The events that hold feedback (server/sessions/feedback.ts folds them into a session's
// feedback history); the session page reads the history again only when one of them arrives.
export const FEEDBACK_EVENT_TYPES: readonly string[] = [
  "OperatorMessagePosted",
  "FeedbackGiven",
  "ChangeRequested",
  "ReviewVerdictRecorded",
  "CritiqueRecorded",
];
