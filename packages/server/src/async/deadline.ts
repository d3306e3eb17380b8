/** Rejects with `DeadlineExceeded` when `promise` has not settled within `ms`. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new DeadlineExceeded(`${what} did not finish within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

export class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded';
}
