import Bowser from 'bowser';

/**
 * A short label for a session's browser, e.g. "Chrome 131 on macOS", from the User-Agent
 * its sign-in sent (parsed by bowser, which keeps up with browsers' strings); undefined
 * when the string names no browser (a server's HTTP client, say).
 */
export function browserLabel(userAgent: string | null): string | undefined {
  if (!userAgent) return undefined;
  const { browser, os } = Bowser.parse(userAgent);
  if (!browser.name) return undefined;
  const major = browser.version?.split('.')[0];
  const name = major ? `${browser.name} ${major}` : browser.name;
  return os.name ? `${name} on ${os.name}` : name;
}
