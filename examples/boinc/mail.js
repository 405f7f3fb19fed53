'use strict';
// Mail to volunteers (a password reset), through a command the operator
// sets: MAIL_COMMAND, run by /bin/sh with the message on its standard
// input, as sendmail reads it (`sendmail -t`: "To:" and "Subject:" headers,
// a blank line, the text), and MAIL_TO set to the recipient.  The front end
// sends no mail without it, and says so.
//
// The command is the operator's; nothing a volunteer sends reaches the
// shell: the recipient is an address that passed the front end's check
// (letters, digits and a few marks, no spaces or newlines) and is passed as
// an environment variable, the message goes to standard input.  A command
// that fails or takes longer than MAIL_TIMEOUT_MS is logged; the volunteer
// is told nothing more (the page answers alike whether or not an account
// has the address).

const { spawn } = require('node:child_process');

const HEADER_SAFE = /^[A-Za-z0-9.!#$%*+/=?^_{|}~'@-]{3,254}$/;

function makeMail({ command, timeoutMs = 30000, from, log }) {
  return {
    enabled: Boolean(command),

    // Send text to one address; resolves whether the command succeeded.
    send(to, subject, text) {
      if (!command) return Promise.resolve(false);
      if (!HEADER_SAFE.test(to)) throw new Error(`not a mail address: ${JSON.stringify(to)}`);
      const message = [`To: ${to}`, ...(from ? [`From: ${from}`] : []), `Subject: ${subject.replace(/[\r\n]/g, ' ')}`,
        'Content-Type: text/plain; charset=utf-8', '', text, ''].join('\n');
      return new Promise((resolve) => {
        const child = spawn('/bin/sh', ['-c', command], {
          env: { ...process.env, MAIL_TO: to }, stdio: ['pipe', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-400); });
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        child.on('error', (err) => {
          clearTimeout(timer);
          log(`mail to ${to}: MAIL_COMMAND could not be run: ${err.message}`);
          resolve(false);
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          if (code === 0) log(`mail to ${to}: ${subject}`);
          else log(`mail to ${to}: MAIL_COMMAND ${signal ? `was killed (${signal})` : `exited with ${code}`}: ${stderr.trim()}`);
          resolve(code === 0);
        });
        child.stdin.on('error', () => {});   // a command that does not read its input
        child.stdin.end(message);
      });
    },
  };
}

module.exports = { makeMail };
