// The book's search ranking (conf.py: html_search_scorer), which replaces
// Sphinx's default Scorer. The points per match are Sphinx's own (a word
// in any heading 15, in the text 5, ...); on top, a page whose title holds
// every searched word gets TITLE_BONUS, so that searching "forget" lists
// the chapter "forget: trading time for memory" before the chapters that
// only have a heading or a paragraph about it.
var Scorer = {
  TITLE_BONUS: 30,

  score: function (result) {
    var title = result[1], score = result[4];
    var query = new URLSearchParams(window.location.search).get("q") || "";
    var words = Scorer.stems(query);
    var inTitle = Scorer.stems(title.split(" > ")[0]);
    var all = words.length > 0 && words.every(function (word) {
      return inTitle.indexOf(word) >= 0;
    });
    return all ? score + Scorer.TITLE_BONUS : score;
  },

  // The words of ``text`` as the search index keeps them: lower case,
  // stemmed (Sphinx's Stemmer, from language_data.js).
  stems: function (text) {
    var stemmer = new Stemmer();
    return (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || [])
      .map(function (word) { return stemmer.stemWord(word); });
  },

  // Sphinx's default points (sphinx/themes/basic/static/searchtools.js).
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
