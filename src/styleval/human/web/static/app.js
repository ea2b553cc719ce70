// Shows each slider's value next to it. The pages work without this file.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("input.slider").forEach(function (slider) {
    var out = slider.nextElementSibling;
    var show = function () { if (out) { out.textContent = slider.value; } };
    slider.addEventListener("input", show);
    show();
  });
});
