import assert from "node:assert/strict";
import { handbookText } from "../../bench/_handbook_docs.ts";

const page = (body: string) =>
  `<html><head><title>T</title></head><body><ul class="docnav top"><li><a href="p.html">Prev</a></li></ul>${body}<ul class="docnav"><li><a href="n.html">Next 9.6. inetd</a></li></ul></body></html>`;

Deno.test("a handbook section reads as its body: headings and paragraphs apart, no navigation", () => {
  const text = handbookText(page(
    `<h2 class="title">9.5. <code>syslog</code> &amp; events</h2><div class="para">
        The <code>rsyslogd</code>   daemon
        collects messages.</div>`,
  ));
  assert.equal(text, "9.5. syslog & events\n\nThe rsyslogd daemon collects messages.");
});

Deno.test("a table row reads on one line, its cells between tabs; code keeps its lines", () => {
  const text = handbookText(page(
    `<table><tr><th>Operating System</th><th>Architecture(s)</th></tr><tr><td>IBM AIX</td><td>powerpc</td></tr></table>` +
      `<pre class="screen">$ mkdir test\n$ ls</pre>`,
  ));
  assert.equal(text, "Operating System\tArchitecture(s)\nIBM AIX\tpowerpc\n\n$ mkdir test\n$ ls");
});
