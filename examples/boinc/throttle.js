'use strict';
// How often something may happen per key (a client's address, an email
// address) in a window of time: the guard of the password pages against
// guessing.  Counts live in memory, one window per key; past maxKeys keys
// the oldest are forgotten, so that a flood of addresses costs bounded
// memory (and wins each of them only a fresh window).

class Throttle {
  constructor({ max, windowMs, maxKeys = 100000 }) {
    this.max = max;
    this.windowMs = windowMs;
    this.maxKeys = maxKeys;
    this.windows = new Map();   // key -> {start, count}, oldest first
  }

  current(key, now) {
    const w = this.windows.get(key);
    if (w === undefined || now - w.start >= this.windowMs) return null;
    return w;
  }

  // Whether key has used up its window.
  over(key, now = Date.now()) {
    return (this.current(key, now)?.count ?? 0) >= this.max;
  }

  // Count one more for key; returns whether it was still within the limit.
  hit(key, now = Date.now()) {
    let w = this.current(key, now);
    if (w === null) {
      this.windows.delete(key);
      if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count += 1;
    return w.count <= this.max;
  }

  // Seconds until key's window ends.
  retryAfter(key, now = Date.now()) {
    const w = this.current(key, now);
    return w === null ? 0 : Math.ceil((w.start + this.windowMs - now) / 1000);
  }
}

module.exports = { Throttle };
