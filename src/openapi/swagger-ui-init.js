// Starts Swagger UI on the docs page ({BASE_PATH}/docs; see swagger-ui-page.ts).
// It is a file served from our origin, not an inline script, so the page's
// Content-Security-Policy allows scripts from 'self' only.
"use strict";
(function () {
  var root = document.getElementById("swagger-ui");
  SwaggerUIBundle({
    domNode: root,
    url: root.getAttribute("data-openapi-url"),
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    // No top bar: it would let the page load descriptions from other hosts.
    layout: "BaseLayout",
    // Never send the document to validator.swagger.io for a badge.
    validatorUrl: null,
    // Ignore ?url= and ?configUrl= in the page's address: a link cannot
    // make this page show another API.
    queryConfigEnabled: false,
    // The pasted API key stays in the tab's memory, never in localStorage.
    persistAuthorization: false,
    deepLinking: true,
    filter: true,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 1,
    docExpansion: "list",
  });
})();
