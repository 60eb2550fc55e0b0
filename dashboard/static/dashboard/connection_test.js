// Admin "Test connection": POST to the API's test action with the session's CSRF token and show
// the result (TTFT and tokens, or the error in words) without leaving the page.
(function () {
  "use strict";
  const box = document.getElementById("connection-test");
  if (!box) return;
  const button = box.querySelector("button[data-test-url]");
  const result = box.querySelector(".connection-result");
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]");

  button.addEventListener("click", async () => {
    button.disabled = true;
    result.className = "connection-result";
    result.textContent = "Testing…";
    try {
      const response = await fetch(button.dataset.testUrl, {
        method: "POST",
        headers: { "X-CSRFToken": csrf ? csrf.value : "", Accept: "application/json" },
        credentials: "same-origin",
      });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) {
        result.textContent = `Could not run the test (HTTP ${response.status}): ${body.detail || ""}`;
        result.classList.add("errornote");
      } else {
        result.textContent = body.summary;
        result.classList.add(body.ok ? "success" : "errornote");
      }
    } catch (error) {
      result.textContent = `Could not run the test: ${error}`;
      result.classList.add("errornote");
    } finally {
      button.disabled = false;
    }
  });
})();
