// "Test connection" (admin endpoint and provider pages, the dashboard's endpoint page): POST to
// the API's test action with the session's CSRF token and show the result (TTFT and tokens, or
// the error in words) beside its button without leaving the page. One box may hold several
// buttons (a provider's endpoints), each with its own result.
(function () {
  "use strict";
  const box = document.getElementById("connection-test");
  if (!box) return;
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]");

  async function test(button, result) {
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
  }

  box.querySelectorAll("button[data-test-url]").forEach((button) => {
    const row = button.closest("[data-connection-row]") || box;
    const result = row.querySelector(".connection-result");
    button.addEventListener("click", () => test(button, result));
  });
})();
