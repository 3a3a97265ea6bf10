// The API reference: Scalar's viewer (self-hosted, loaded by this page only) showing the API's own
// /openapi.json, found from the apiUrl in config.json as the dashboard finds the API.
fetch('config.json')
  .then((res) => res.json())
  .then((config) => {
    const api = new URL(config.apiUrl, location.href);
    // Scalar: the global the viewer's standalone bundle defines. Not mounted on id="api-reference",
    // where the bundle mounts a second copy of itself with its defaults (fonts from its CDN).
    Scalar.createApiReference('#reference', {
      url: new URL('openapi.json', api).href,
      // Fonts from Scalar's CDN, which the page's policy refuses anyway: the system's fonts.
      withDefaultFonts: false,
      hideClientButton: true,
      // Every operation written out (the viewer would open the first tag only), to read or find in the page.
      defaultOpenAllTags: true,
    });
  })
  .catch(() => {
    document.getElementById('reference').textContent =
      'The API reference could not load its configuration. The document is at the API’s /openapi.json.';
  });
