// A live "used / allowed" count under each field that has data-max-chars, counted as the
// server counts (judgements/core/text.py char_count): code points, a line break as one, after
// stripping white space at both ends. The fields have no maxlength attribute, which
// browsers count in UTF-16 units and enforce by cutting pasted text without a word; a
// text over the limit is sent, and comes back whole with the server's error.
(function () {
  "use strict";
  // Python's str.isspace() set, which Django's strip uses; JavaScript's \s differs.
  var EDGE_SPACE =
    /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;
  var SURROGATE_PAIR = /[\ud800-\udbff][\udc00-\udfff]/g;
  var number = new Intl.NumberFormat("en-US");

  function charCount(value) {
    // A textarea's value holds line breaks as "\n", one character each, as on the server.
    var text = value.replace(EDGE_SPACE, "");
    var pairs = text.match(SURROGATE_PAIR);
    return text.length - (pairs ? pairs.length : 0);
  }

  function update(field, counter) {
    var limit = Number(field.dataset.maxChars);
    var used = charCount(field.value);
    var over = used - limit;
    counter.textContent =
      number.format(used) + " / " + number.format(limit) + " characters" +
      (over > 0 ? ": " + number.format(over) + " over the limit" : "");
    counter.classList.toggle("errors", over > 0);
    counter.classList.toggle("help", over <= 0);
    counter.dataset.over = over > 0 ? "true" : "false";
  }

  function start() {
    document.querySelectorAll("[data-count-for]").forEach(function (counter) {
      var field = document.getElementById(counter.dataset.countFor);
      if (!field || !field.dataset.maxChars) return;
      field.setAttribute(
        "aria-describedby",
        ((field.getAttribute("aria-describedby") || "") + " " + counter.id).trim()
      );
      field.addEventListener("input", function () { update(field, counter); });
      update(field, counter);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
