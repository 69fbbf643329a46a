import { describe, expect, it } from 'vitest';
import { ConnectionLock } from './connection-lock.js';

describe('ConnectionLock', () => {
  it('[K-9.25] waiters get the lock in the order they asked, handed over on release; tryAcquire never jumps the queue', async () => {
    const lock = new ConnectionLock();
    expect(lock.tryAcquire()).toBe(true);
    expect(lock.tryAcquire()).toBe(false);
    const got: number[] = [];
    const waiters = [1, 2, 3].map((i) => lock.acquire().then(() => got.push(i)));
    lock.release(); // to 1
    await waiters[0];
    expect(lock.tryAcquire()).toBe(false); // 1 holds it, 2 and 3 wait
    lock.release(); // to 2
    lock.release(); // to 3
    await Promise.all(waiters);
    expect(got).toEqual([1, 2, 3]);
    lock.release(); // free again
    expect(lock.tryAcquire()).toBe(true);
  });
});
