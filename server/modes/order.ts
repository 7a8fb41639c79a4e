// Orders the modes decide by, the same on every machine and in every replay (docs/conversations.md).

/**
 * Strings in Unicode code-point order: unlike `localeCompare` it does not depend on the
 * locale, and unlike `<` it does not compare UTF-16 code units (which put U+FF5E after
 * U+1F600's surrogates, the reverse of their code points).
 */
export function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** Fractions (weights, confidences) are counted in millionths: integer sums, equal whatever their order. */
const MILLIONTHS = 1_000_000;

/** `value` in whole millionths: the unit a tally adds in. */
export function toMillionths(value: number): number {
  return Math.round(value * MILLIONTHS);
}

export function fromMillionths(units: number): number {
  return units / MILLIONTHS;
}
