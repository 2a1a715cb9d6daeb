// The grid's operator script: a plain click opens a slot's details (fetched on click from
// celos-ui's /slot, never with the page), Ctrl-click on another slot of the same workflow
// widens the rerun range, the range bar previews a rerun (dryRun) before confirming it, and
// the optional auto-refresh waits while details or a preview are open. Plain DOM, no framework;
// data from celos-server is inserted as text (the details fragment is escaped by celos-ui).
#include "ui/details.h"

namespace celos {

namespace {

constexpr std::string_view kDetailsScript = R"js(
(function () {
  var grid = document.getElementById('grid');
  function $(id) { return document.getElementById(id); }
  var details = $('details'), bar = $('range'), result = $('range-result');
  var range = null, loads = 0;
  function enc(s) { return encodeURIComponent(s); }
  function plusSecond(t) { return new Date(new Date(t).getTime() + 1000).toISOString(); }
  function rowOf(wf) {
    var rows = grid.querySelectorAll('tr[data-wf]');
    for (var i = 0; i < rows.length; i++) if (rows[i].getAttribute('data-wf') === wf) return rows[i];
    return null;
  }
  function markRange() {
    Array.prototype.forEach.call(grid.querySelectorAll('td.in-range'),
      function (c) { c.classList.remove('in-range'); });
    var row = range && rowOf(range.wf);
    if (!row) return;
    var start = $('range-start').value, end = $('range-end').value;
    Array.prototype.forEach.call(row.querySelectorAll('td[data-t], td[data-tile]'), function (c) {
      var t = c.getAttribute('data-t') || c.getAttribute('data-tile');
      if (t >= start && t < end) c.classList.add('in-range');
    });
  }
  function setRange(wf, start, end) {
    range = {wf: wf};
    $('range-wf').textContent = wf;
    $('range-start').value = start;
    $('range-end').value = end;
    result.textContent = '';
    result.removeAttribute('data-state');
    bar.hidden = false;
    markRange();
  }
  function openDetails(id) {
    var mine = ++loads;
    details.hidden = false;
    document.body.classList.add('details-open');
    details.removeAttribute('data-loaded');
    details.innerHTML = '<p>Loading ' + id.replace(/[&<>"']/g, '') + '…</p>';
    fetch('slot?id=' + enc(id)).then(function (r) { return r.text(); }).then(function (t) {
      if (mine !== loads) return;
      details.innerHTML = '<button id="details-close" type="button">close</button>' + t;
      details.setAttribute('data-loaded', id);
      $('details-close').addEventListener('click', function () {
        details.hidden = true;
        document.body.classList.remove('details-open');
      });
    }).catch(function (err) { details.textContent = 'Could not load ' + id + ': ' + err; });
  }
  var zoomMs = Number(grid.getAttribute('data-zoom')) * 60000;
  function iso(ms) { return new Date(ms).toISOString(); }
  // A tile of several slots (zoomed out): its slots become the range; Ctrl-click widens it.
  grid.addEventListener('click', function (e) {
    if (e.shiftKey || e.altKey) return;
    var td = e.target.closest('td[data-tile]');
    if (!td) return;
    e.preventDefault();
    var wf = td.parentNode.getAttribute('data-wf'), start = new Date(td.getAttribute('data-tile')).getTime();
    // Not past the page's time: the grid shows the slots up to it, the range the same ones.
    var end = Math.min(start + zoomMs, new Date(grid.getAttribute('data-time')).getTime() + 1000);
    if ((e.ctrlKey || e.metaKey) && range && range.wf === wf) {
      start = Math.min(start, new Date($('range-start').value).getTime());
      end = Math.max(end, new Date($('range-end').value).getTime());
    }
    setRange(wf, iso(start), iso(end));
  });
  grid.addEventListener('click', function (e) {
    if (e.shiftKey || e.altKey) return;
    var td = e.target.closest('td[data-t]');
    if (!td) return;
    e.preventDefault();
    var wf = td.parentNode.getAttribute('data-wf'), t = td.getAttribute('data-t');
    if ((e.ctrlKey || e.metaKey) && range && range.wf === wf) {
      var first = $('range-start').value, last = t;
      if (t < first) { first = t; last = new Date(new Date($('range-end').value).getTime() - 1000).toISOString(); }
      setRange(wf, first, plusSecond(last));
      return;
    }
    setRange(wf, t, plusSecond(t));
    openDetails(wf + '@' + t);
  });
  function rangeUrl(dry) {
    var status = $('range-status').value.trim();
    return 'rerun?id=' + enc(range.wf) + '&start=' + enc($('range-start').value) +
      '&end=' + enc($('range-end').value) + (status ? '&status=' + enc(status) : '') +
      (dry ? '&dryRun=true' : '');
  }
  function post(url) {
    return fetch(url, {method: 'POST'}).then(function (r) {
      return r.json().then(function (j) { if (!r.ok) throw new Error(j.error || ('HTTP ' + r.status)); return j; });
    });
  }
  function line(list, text, cls) {
    var li = document.createElement('li');
    li.textContent = text;
    if (cls) li.className = cls;
    list.appendChild(li);
  }
  function show(j, dry) {
    result.textContent = '';
    var head = document.createElement('p');
    head.textContent = (dry ? 'Would rerun ' : 'Reran ') + j.slots.length + ' slot(s) of ' +
      range.wf + (j.skipped.length ? '; ' + j.skipped.length + ' skipped' : '') + '.';
    result.appendChild(head);
    var list = document.createElement('ul');
    list.id = dry ? 'range-would' : 'range-done';
    j.slots.forEach(function (s) { line(list, s.time + ': ' + (s.from || 'nothing stored') + ' \u2192 ' + s.to, 'slot'); });
    j.skipped.forEach(function (s) { line(list, s.time + ': ' + s.status + ' skipped (' + s.reason + ')', 'skipped'); });
    result.appendChild(list);
    result.setAttribute('data-state', dry ? 'preview' : 'done');
  }
  $('range-preview').addEventListener('click', function () {
    if (!range) return;
    result.setAttribute('data-state', 'loading');
    post(rangeUrl(true)).then(function (j) {
      show(j, true);
      if (!j.slots.length) return;
      var ok = document.createElement('button');
      ok.id = 'range-confirm';
      ok.type = 'button';
      ok.textContent = 'Confirm: rerun ' + j.slots.length + ' slot(s)';
      ok.addEventListener('click', confirmRange);
      result.appendChild(ok);
    }).catch(function (err) { result.textContent = 'Preview failed: ' + err.message; result.setAttribute('data-state', 'error'); });
  });
  function confirmRange() {
    post(rangeUrl(false)).then(function (j) {
      show(j, false);
      var row = rowOf(range.wf);
      j.slots.forEach(function (s) {
        var c = row && row.querySelector('td[data-t="' + s.time + '"]');
        if (!c) return;
        c.className = 'slot ' + s.to.toLowerCase();
        c.textContent = s.to === 'WAITING' ? 'wait' : s.to.toLowerCase();
      });
      // The open details show the state before the rerun: read them again.
      var shown = details.hidden ? null : details.getAttribute('data-loaded');
      if (shown && shown.lastIndexOf(range.wf + '@', 0) === 0) openDetails(shown);
    }).catch(function (err) { result.textContent = 'Rerun failed: ' + err.message; result.setAttribute('data-state', 'error'); });
  }
  $('range-clear').addEventListener('click', function () { range = null; bar.hidden = true; markRange(); });
  ['range-start', 'range-end'].forEach(function (id) { $(id).addEventListener('change', markRange); });
  var refresh = Number(grid.getAttribute('data-refresh') || 0);
  function tick() {
    if (details.hidden && bar.hidden) { location.reload(); return; }
    setTimeout(tick, refresh * 1000);  // not while someone reads details or a preview
  }
  if (refresh > 0) setTimeout(tick, refresh * 1000);
})();
)js";

constexpr std::string_view kDetailsStyle = R"css(
#filter { margin-bottom: 6px; }
#range { background: #eef; border: 1px solid #88c; padding: 4px; margin-bottom: 6px; }
#range input { font-family: monospace; width: 16em; }
#range input#range-status { width: 12em; }
#range-result ul { margin: 4px 0; }
body.details-open { margin-right: calc(42% + 8px); }
#details { position: fixed; top: 0; right: 0; width: 42%; height: 100%; overflow: auto;
  background: #fff; border-left: 2px solid #888; padding: 6px; box-sizing: border-box; }
#details h2 { font-size: 14px; margin: 4px 0; }
#details h3 { font-size: 12px; margin: 8px 0 2px; }
#details table { border-collapse: collapse; }
#details th, #details td { border: 1px solid #ddd; padding: 1px 4px; text-align: left; vertical-align: top; }
#details pre { background: #f4f4f4; padding: 4px; max-height: 18em; overflow: auto; white-space: pre-wrap; }
#details .note { color: #666; }
#grid td.in-range { outline: 2px solid #06c; }
)css";

}  // namespace

std::string_view ui_details_script() { return kDetailsScript; }
std::string_view ui_details_style() { return kDetailsStyle; }

}  // namespace celos
