// The course's additions to the book's search (conf.py: html_js_files).
//
// Sphinx highlights the searched words on the page a result opens
// (sphinx_highlight.js), but only on pages that do not load its search
// code, and this theme loads it on every page (for its search box): so
// nothing was highlighted. Here, each result links to its page with
// ?highlight=<the words>, and every page other than the search page asks
// Sphinx to highlight them, then scrolls to the first one.
(function () {
  "use strict";

  function onSearchPage() {
    return document.getElementById("search-results") !== null;
  }

  // Search page: add ?highlight=<query> to each result's link as it appears.
  function linkResultsWithTheirWords() {
    var query = new URLSearchParams(window.location.search).get("q");
    var results = document.getElementById("search-results");
    if (!query || !results) { return; }
    function mark() {
      results.querySelectorAll("ul.search li > a").forEach(function (link) {
        if (link.dataset.highlight) { return; }
        var href = link.getAttribute("href");
        var hash = href.indexOf("#");
        var path = hash < 0 ? href : href.slice(0, hash);
        var anchor = hash < 0 ? "" : href.slice(hash);
        link.setAttribute("href", path + (path.indexOf("?") < 0 ? "?" : "&") +
          "highlight=" + encodeURIComponent(query) + anchor);
        link.dataset.highlight = "1";
      });
    }
    new MutationObserver(mark).observe(results, {childList: true, subtree: true});
    mark();
  }

  // Any other page: highlight the words it was opened with.
  function highlightTheWords() {
    var words = new URLSearchParams(window.location.search).get("highlight") ||
      window.localStorage.getItem("sphinx_highlight_terms");
    if (!words || typeof SphinxHighlight === "undefined") { return; }
    SphinxHighlight.highlightSearchWords();
    // Sphinx wraps the words a moment later; then show the first one that
    // is in sight (not in a folded menu).
    window.setTimeout(function () {
      var shown = Array.prototype.filter.call(
        document.querySelectorAll("main span.highlighted"),
        function (span) { return span.offsetParent !== null; });
      if (shown.length && !window.location.hash) {
        shown[0].scrollIntoView({block: "center"});
      }
    }, 50);
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (onSearchPage()) { linkResultsWithTheirWords(); } else { highlightTheWords(); }
  });
})();
