// How soon an open page tries its live socket again after the server went away.
// The ws extension's default waits up to 2^n seconds between attempts (up to 64 s), so a
// page left open across a restart that took a few seconds could go on showing a stale
// judgement for most of a minute after the server was back. A refused attempt costs the
// server nothing, so try again within two seconds; the full jitter (a random share of the
// cap) keeps many open pages from coming back in step.
(function () {
  "use strict";
  var FIRST_MS = 250;
  var CAP_MS = 2000;
  htmx.config.wsReconnectDelay = function (retryCount) {
    return Math.min(CAP_MS, FIRST_MS * Math.pow(2, retryCount)) * Math.random();
  };
})();
