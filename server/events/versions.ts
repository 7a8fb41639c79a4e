// A stream's versions as inputs take them: whole numbers that PostgreSQL's int4 columns
// (events.version, streams.version) hold. Every schema that takes a version uses these, so a
// number past the column (2^31, 2^53 − 1) is a 400 naming the field, never the database's
// "out of range" as a 500.
import { z } from "zod";

/** The largest version an int4 column holds; also "the latest" where a read takes an upper bound. */
export const MAX_VERSION = 2_147_483_647;

/** A version or a count of events: 0 (nothing yet) to MAX_VERSION. */
export const ZVersion = z.number().int().min(0).max(MAX_VERSION);

/** The version of a recorded event: 1 to MAX_VERSION. */
export const ZEventVersion = ZVersion.min(1);
