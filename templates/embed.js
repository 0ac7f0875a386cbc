/* podsearch "Nearby episodes" widget: <div data-podsearch-similar="EPISODE ID"></div> then this script. */
(function () {
  var page = {{ absolute_url('embed.similar', episode_id='__ID__')|tojson }};
  var origin = new URL(page).origin, frames = [];
  function place(el) {
    if (el.getAttribute('data-podsearch-placed')) return;
    el.setAttribute('data-podsearch-placed', '1');
    var params = [];
    ['k', 'same_show', 'link'].forEach(function (name) {
      var v = el.getAttribute('data-' + name.replace('_', '-'));
      if (v) params.push(name + '=' + encodeURIComponent(v));
    });
    var f = document.createElement('iframe');
    f.src = page.replace('__ID__', encodeURIComponent(el.getAttribute('data-podsearch-similar'))) + (params.length ? '?' + params.join('&') : '');
    f.title = el.getAttribute('data-title') || 'Nearby episodes';
    f.loading = 'lazy';
    f.style.cssText = 'border:0;width:100%;height:' + (el.getAttribute('data-height') || '360') + 'px';
    el.appendChild(f);
    frames.push(f);
  }
  window.addEventListener('message', function (e) {
    if (e.origin !== origin || !e.data || e.data.podsearch !== 'height') return;
    frames.forEach(function (f) { if (f.contentWindow === e.source) f.style.height = Math.min(2000, Math.ceil(+e.data.height || 0) + 4) + 'px'; });
  });
  function all() { Array.prototype.forEach.call(document.querySelectorAll('[data-podsearch-similar]'), place); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', all); else all();
})();
