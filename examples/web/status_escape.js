'use strict';
// Text into HTML, for the status page: every value that comes from the
// database is escaped, since workload, app and host names are typed by
// operators and, on a farm where hosts register themselves, by strangers.

const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

module.exports = { esc };
