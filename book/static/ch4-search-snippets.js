// The search page only (book/snippets.py): Sphinx shows a result's snippet by fetching the result's
// page, which a browser refuses for a site opened from disk (file://). Answer those fetches from
// the pages' text kept by the build (ch4-page-text.js); anything else goes to the real fetch.
(() => {
  const pages = window.CH4_PAGE_TEXT || {};
  const realFetch = window.fetch.bind(window);
  window.fetch = (resource, options) => {
    const root = new URL(document.documentElement.dataset.content_root || "./", document.baseURI).href;
    const url = new URL(String(resource), document.baseURI);
    url.search = "";
    url.hash = "";
    if (url.href.startsWith(root)) {
      const name = decodeURIComponent(url.href.slice(root.length)).replace(/\.html$/, "");
      if (Object.prototype.hasOwnProperty.call(pages, name)) {
        const headers = { "Content-Type": "text/html; charset=utf-8" };
        return Promise.resolve(new Response(pages[name], { headers }));
      }
    }
    return realFetch(resource, options);
  };
})();
