/** One imported hash algorithm: its self-describing form, and its check. */
export interface HashVerifier {
  /** Whether `encoded` is well formed (and within the cost limits that keep a check cheap). */
  accepts(encoded: string): boolean;
  /** Whether `password` matches; only called with an `encoded` that `accepts` took. */
  verify(encoded: string, password: string): Promise<boolean>;
}
