(function () {
  var form = document.querySelector('form[data-suggest]');
  var input = form && form.querySelector('input[role=combobox]');
  var list = input && document.getElementById(input.getAttribute('aria-controls'));
  if (!list || !window.fetch) return;
  var timer = null, items = [], active = -1, asked = '';
  var kinds = {show: 'show', episode: 'episode', person: 'person', term: ''};
  function close() { list.hidden = true; input.setAttribute('aria-expanded', 'false'); input.removeAttribute('aria-activedescendant'); active = -1; }
  function mark(i) {
    var nodes = list.children;
    for (var j = 0; j < nodes.length; j++) nodes[j].setAttribute('aria-selected', j === i ? 'true' : 'false');
    active = i;
    if (i >= 0) input.setAttribute('aria-activedescendant', nodes[i].id); else input.removeAttribute('aria-activedescendant');
  }
  function go(item) {
    if (item.kind === 'show' && item.id) { location.href = form.dataset.show.replace('__ID__', encodeURIComponent(item.id)); return; }
    if (item.kind === 'episode' && item.id) { location.href = form.dataset.episode.replace('__ID__', encodeURIComponent(item.id)); return; }
    if (item.kind === 'person') { location.href = form.action + '?person=' + encodeURIComponent(item.text); return; }
    input.value = asked.replace(/\S*$/, item.text); close(); form.submit();  // a word completes the last one typed
  }
  function render(data) {
    items = data.suggestions || [];
    list.textContent = '';
    items.forEach(function (s, i) {
      var li = document.createElement('li');
      li.id = 'q-opt-' + i; li.setAttribute('role', 'option'); li.setAttribute('aria-selected', 'false');
      var text = document.createElement('bdi'); text.textContent = s.text; li.appendChild(text);
      if (kinds[s.kind]) { var k = document.createElement('small'); k.textContent = kinds[s.kind]; li.appendChild(k); }
      li.addEventListener('mousedown', function (e) { e.preventDefault(); go(s); });
      list.appendChild(li);
    });
    if (items.length) { list.hidden = false; input.setAttribute('aria-expanded', 'true'); active = -1; } else close();
  }
  input.addEventListener('input', function () {
    clearTimeout(timer);
    var value = input.value.trim();
    if (value.length < 2) { close(); return; }
    timer = setTimeout(function () {
      asked = value;
      fetch(form.dataset.suggest + '?q=' + encodeURIComponent(value), {headers: {Accept: 'application/json'}})
        .then(function (r) { return r.ok ? r.json() : {suggestions: []}; })
        .then(function (data) { if (asked === input.value.trim()) render(data); })
        .catch(function () { close(); });
    }, 120);
  });
  input.addEventListener('keydown', function (e) {
    if (list.hidden) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      var next = active + (e.key === 'ArrowDown' ? 1 : -1);
      mark(next >= items.length ? -1 : next < -1 ? items.length - 1 : next);
    } else if (e.key === 'Enter' && active >= 0) { e.preventDefault(); go(items[active]); }
    else if (e.key === 'Escape') { e.preventDefault(); close(); }
  });
  input.addEventListener('blur', function () { setTimeout(close, 100); });
})();
