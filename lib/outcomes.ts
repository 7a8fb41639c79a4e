// How sessions end, as every side reads it: the outcomes that mean the work was done.

/** review_loop's `approved`, planning's `done`, the Forge pipeline's `completed`. */
export const SUCCESS_OUTCOMES: readonly string[] = ["approved", "done", "completed"];
