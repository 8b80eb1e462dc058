// The search page only (book/search.py): cut a query the way the index was cut. Sphinx splits a
// query at spaces and punctuation only, so a run of Chinese characters stayed one term, found
// only when the index happened to hold it whole. Here each such run is cut into the longest words
// the index holds (its terms and title terms), left to right; a character that starts no such word
// is dropped, as the index keeps no single characters. Latin words stay as Sphinx splits them.
(() => {
  const HAN = /(\p{Script=Han}+)/u;
  const known = (word) => {
    const index = Search._index;
    return Object.hasOwn(index.terms, word) || Object.hasOwn(index.titleterms, word);
  };
  const cut = (run) => {
    const words = [];
    for (let start = 0; start < run.length; ) {
      let end = run.length;
      while (end - start > 1 && !known(run.slice(start, end))) end -= 1;
      if (end - start > 1) words.push(run.slice(start, end));
      start = end;
    }
    return words;
  };
  window.splitQuery = (query) =>
    query
      .split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu) // Sphinx's own split first
      .filter((term) => term)
      .flatMap((term) => (Search._index ? term.split(HAN).filter((part) => part) : [term]))
      .flatMap((part) => (HAN.test(part) ? cut(part) : [part]));
})();
