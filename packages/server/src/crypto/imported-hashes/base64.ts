/** Standard or URL-safe base64, padded or not (PHC strings leave the padding out). */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The bytes of a base64 string, or undefined when it is not one (or is empty). */
export function fromBase64(value: string): Buffer | undefined {
  if (!value || !BASE64.test(value)) return undefined;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length > 0 ? bytes : undefined;
}

/** Unsigned decimal integer within [min, max], or undefined. */
export function boundedInt(value: string | undefined, min: number, max: number) {
  if (value === undefined || !/^\d{1,10}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}

/** `a=1,b=2` (a PHC parameter list) as a map. */
export function phcParams(value: string): Map<string, string> {
  return new Map(
    value.split(',').map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)] as [string, string];
    }),
  );
}
