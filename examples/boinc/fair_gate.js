'use strict';
// The gate in front of scrypt: at most `running` at once (each takes about
// 0.1 s of a thread and 32 MiB; the uploads need the other threads of
// libuv's pool), the others waiting their turn, shared fairly so that no
// crowd of strangers keeps anyone else out:
//
//   kinds    "new" (a password being set: a sign-up, a reset, a change)
//            and "check" (a password being checked: a lookup, a login, an
//            account manager).  When both wait, they take turns: however
//            many lookups of unknown addresses arrive, a sign-up waits for
//            at most one of them.  Each kind has its own waiting room of
//            maxWaiting; a full one refuses its own kind only.
//   clients  within a kind, each client address waits in its own line and
//            the lines take turns, so that an address that sends many gets
//            no more than one that sends one; at most perClient wait per
//            address.
//   accounts at most perAccount wait per account (email address), whoever
//            sends them.
//
// Past a limit the caller gets Busy at once ("try again later", BOINC's
// -199), never a place in a line it cannot leave.

class Busy extends Error {}

const KINDS = ['new', 'check'];

function makeFairGate({ running: maxRunning = 2, maxWaiting = 64, perClient = 4, perAccount = 2 } = {}) {
  let running = 0;
  // kind -> {lines: Map(client -> [task]), waiting: n}; lines in turn order.
  const rooms = new Map(KINDS.map((k) => [k, { lines: new Map(), waiting: 0 }]));
  const accounts = new Map();   // account -> tasks waiting
  let lastKind = KINDS.length - 1;

  // The next task: the kinds in turn, then the clients of that kind in turn
  // (a client served goes to the back: a Map keeps insertion order).
  function take() {
    for (let i = 1; i <= KINDS.length; i++) {
      const k = (lastKind + i) % KINDS.length;
      const room = rooms.get(KINDS[k]);
      if (room.waiting === 0) continue;
      const [client, line] = room.lines.entries().next().value;
      const task = line.shift();
      room.lines.delete(client);
      if (line.length > 0) room.lines.set(client, line);
      room.waiting -= 1;
      lastKind = k;
      return task;
    }
    return null;
  }

  function release() {
    running -= 1;
    const task = take();
    if (task !== null) {
      if (task.account !== null) {
        const n = accounts.get(task.account) - 1;
        if (n === 0) accounts.delete(task.account);
        else accounts.set(task.account, n);
      }
      running += 1;
      task.start();
    }
  }

  return {
    // fn() once the gate lets it through; kind 'new' or 'check', client the
    // address it comes from, account the email address it concerns (or
    // null).  Rejects with Busy when it may not wait.
    async run(kind, client, account, fn) {
      const room = rooms.get(kind);
      if (room === undefined) throw new Error(`unknown kind of scrypt work: ${kind}`);
      if (running >= maxRunning) {
        const line = room.lines.get(client) ?? [];
        if (room.waiting >= maxWaiting) throw new Busy('too many logins at once; try again in a minute');
        if (line.length >= perClient) throw new Busy('too many logins from this address at once; try again in a minute');
        if (account !== null && (accounts.get(account) ?? 0) >= perAccount) {
          throw new Busy('too many logins of this account at once; try again in a minute');
        }
        await new Promise((resolve) => {
          line.push({ account, start: resolve });
          room.lines.set(client, line);
          room.waiting += 1;
          if (account !== null) accounts.set(account, (accounts.get(account) ?? 0) + 1);
        });
      } else {
        running += 1;
      }
      try {
        return await fn();
      } finally {
        release();
      }
    },
    // For the log and the tests: how many run and wait.
    state: () => ({ running, waiting: Object.fromEntries(KINDS.map((k) => [k, rooms.get(k).waiting])) }),
  };
}

module.exports = { makeFairGate, Busy, KINDS };
