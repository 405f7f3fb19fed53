'use strict';
// What the volunteer is told in a scheduler reply: BOINC's <message>s.  The
// client shows each in its event log (boinccmd --get_messages), and one of
// priority "notice" also as a notice (the Manager's Notices tab, boinccmd
// --get_notices) until a later reply to a request for work has none
// (client/cs_scheduler.cpp).  So:
//
//   notice  what went wrong with this volunteer's own tasks: a report the
//           project refused (came too late), a result counted as an error
//           (its output missing or not the one reported), a task the
//           project aborts, a task the client lost, a new computer refused
//   low     why no task was sent (allot's backoff: none now, or no app for
//           this kind of computer), when the client will ask again
//
// Every text is built here from the front end's own words and values it
// checked; allot's messages are passed on as allot wrote them.  At most
// MAX_MESSAGES go in a reply, notices first; the rest are counted in a
// last one.
//
// What allot says (issue 32): a resource's reason for sending nothing
// (reply.resources.R.reason: a host backing off after its failures), and
// why a sending ended (the row's ended_reason): when present, they are
// shown instead of the front end's general words.

const MAX_MESSAGES = 20;

// BOINC's names of allot's resources, as volunteers know them.
const RESOURCE_NAMES = { cpu: 'CPU', nvidia: 'NVIDIA GPU', amd: 'AMD GPU', intel: 'Intel GPU' };

const minutes = (secs) => (secs < 120 ? `${Math.round(secs)} s`
  : secs < 7200 ? `${Math.round(secs / 60)} min` : `${(secs / 3600).toFixed(1)} h`);

class Messages {
  constructor() {
    this.list = [];
  }

  add(priority, text) {
    this.list.push({ priority, text });
    return this;
  }

  notice(text) {
    return this.add('notice', text);
  }

  low(text) {
    return this.add('low', text);
  }

  // A report and what came of it (results.report's answer).
  report(name, answer) {
    if (answer.outcome === 'refused') {
      this.notice(`Task ${name} was not accepted: ${answer.detail}. It earns no credit.`);
    } else if (answer.outcome === 'error' && answer.checked) {
      // The client said it succeeded; the project found otherwise.
      this.notice(`Task ${name} counts as an error: ${answer.detail}.`);
    } else if (answer.outcome === 'unknown') {
      this.low(`Task ${name} is not one this computer was sent; its report is ignored.`);
    }
    return this;
  }

  // Tasks the reply tells the client to stop, and tasks it lost.
  stops({ aborts, abortsIfNotStarted, lost }) {
    for (const a of aborts) {
      this.notice(`The project aborts task ${a.name}: ${a.reason ?? 'it is no longer this computer\'s (timed out, or taken back by the project)'}.`);
    }
    for (const name of abortsIfNotStarted) {
      this.notice(`Task ${name} is past its deadline: it is aborted if it has not started.`);
    }
    for (const name of lost) {
      this.notice(`Task ${name} is no longer on this computer; the project sends it to another one.`);
    }
    return this;
  }

  // Why no task was sent for a resource the client asked for (allot's
  // reply), and when the client asks again.
  backoffs(reply, asked, delays) {
    for (const [resource, r] of Object.entries(reply?.resources ?? {})) {
      if (r.status === 'work' || !asked.has(resource)) continue;
      const what = RESOURCE_NAMES[resource] ?? resource;
      const why = r.reason ?? (r.status === 'unsupported'
        ? `this project has no app for this computer's ${what}`
        : `no task for this computer's ${what} is available now`);
      const when = delays.nextRpcDelay ? `; asking again in ${minutes(delays.nextRpcDelay)}` : '';
      this.low(`No tasks sent for ${what}: ${why}${when}.`);
    }
    return this;
  }

  // The <message> elements, at most MAX_MESSAGES, notices first.
  write(w) {
    const ordered = [...this.list.filter((m) => m.priority === 'notice'), ...this.list.filter((m) => m.priority !== 'notice')];
    const shown = ordered.length > MAX_MESSAGES ? ordered.slice(0, MAX_MESSAGES - 1) : ordered;
    if (shown.length < ordered.length) {
      shown.push({ priority: 'notice', text: `${ordered.length - shown.length} more messages about this computer's tasks were left out of this reply.` });
    }
    for (const m of shown) w.message(m.priority, m.text);
    return shown.length;
  }
}

module.exports = { Messages, MAX_MESSAGES, RESOURCE_NAMES };
