// Shows each slider's value next to it, and ticks the slider's "set" box once it is moved (an untouched slider
// is refused by the server rather than stored as its starting value). The pages work without this file: the
// "set" box can be ticked by hand.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("input.slider").forEach(function (slider) {
    var out = slider.parentNode.querySelector("output.value");
    var set = slider.form ? slider.form.elements[slider.name + ".set"] : null;
    var show = function () {
      if (out) { out.textContent = (!set || set.checked) ? slider.value : "not set"; }
    };
    var moved = function () { if (set) { set.checked = true; } show(); };
    slider.addEventListener("input", moved);
    slider.addEventListener("change", moved);
    if (set) { set.addEventListener("change", show); }
    show();
  });
});
