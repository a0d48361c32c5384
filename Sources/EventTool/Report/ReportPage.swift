import EventGraph
internal import EventGraphText
import Foundation

/// `eventtool report`'s page: one self-contained HTML file (no network, no server) — the
/// summary, the model's diagram and the commit timeline as SVG drawn here, the entities and
/// consumers, and an object browser whose script reads the data embedded in the page.
///
/// The page's views are tabs; its address's fragment chooses one and the browser's object
/// and commits (`#view=objects&object=AddressBook/3&at=7&from=5`), so that a view can be
/// linked to, and tested in a headless browser.
enum ReportPage {
  static func html(_ data: ReportData, model: Model) -> String {
    let browser = JSON.object([
      JSONField("objects", .array(data.objects)), JSONField("leftOut", .int(Int64(data.objectsLeftOut))),
      JSONField("considered", .int(Int64(data.objectsConsidered))),
    ])
    // `</` may not appear inside the script element that holds the data.
    let embedded = browser.serialized().replacingOccurrences(of: "</", with: "<\\/")
    var summary = data.summary.map { "<tr><th>\(escape($0.0))</th><td>\(escape($0.1))</td></tr>" }.joined()
    summary += "<tr><th>Report made</th><td>\(escape(ISO8601.format(Date())))</td></tr>"
    let entities = data.entities.map { "<tr><td>\(escape($0.name))</td><td class=n>\($0.count)</td></tr>" }.joined()
    let consumers =
      data.consumers.isEmpty
      ? "<p>No consumer has acknowledged a position.</p>"
      : "<table><tr><th>Consumer</th><th>Lag (events)</th></tr>"
        + data.consumers.map { "<tr><td>\(escape($0.name))</td><td class=n>\($0.lag)</td></tr>" }.joined() + "</table>"
    return """
      <!DOCTYPE html>
      <html lang="en"><head><meta charset="utf-8">
      <title>EventGraph report: \(escape(model.name))</title>
      <style>\(style)</style></head>
      <body data-ready="no">
      <header><h1>EventGraph store \(escape(model.name)) v\(model.version)</h1>
      <nav><button data-view="summary">Summary</button><button data-view="model">Model</button>\
      <button data-view="timeline">Timeline</button><button data-view="objects">Objects</button></nav></header>
      <section id="summary"><h2>Summary</h2><table>\(summary)</table>
      <h2>Objects per entity</h2><table><tr><th>Entity</th><th>Live objects</th></tr>\(entities)</table>
      <h2>Consumers</h2>\(consumers)</section>
      <section id="model"><h2>Model</h2>\(diagram(model))</section>
      <section id="timeline"><h2>Commits over time</h2>\(timeline(data))</section>
      <section id="objects"><h2>Objects</h2>
      <p id="objects-note"></p>
      <label>Object <select id="object"></select></label>
      <label>at commit <select id="at"></select></label>
      <label>compared with <select id="from"><option value="">—</option></select></label>
      <div class="browser"><div><h3>State</h3><table id="state"></table></div>
      <div><h3>History</h3><ol id="history"></ol></div></div></section>
      <script type="application/json" id="data">\(embedded)</script>
      <script>\(script)</script>
      </body></html>

      """
  }

  static func escape(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for c in s {
      switch c {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      default: out.append(c)
      }
    }
    return out
  }

  // MARK: - The model's diagram

  /// Entities as boxes in a grid (name, then attributes), relationships as lines between
  /// them labelled with their names (`*` for to-many); an inverse pair is one line.
  static func diagram(_ model: Model) -> String {
    let entities = model.entities
    guard !entities.isEmpty else { return "<p>The model has no entity.</p>" }
    let columns = max(1, Int(Double(entities.count).squareRoot().rounded(.up)))
    let (width, lineHeight, gapX, gapY) = (220.0, 16.0, 140.0, 70.0)
    let heights = entities.map { 28 + Double($0.attributes.count) * lineHeight + 8 }
    let rowHeight = (heights.max() ?? 60) + gapY
    var position: [EntityID: (x: Double, y: Double, h: Double)] = [:]
    for (i, e) in entities.enumerated() {
      position[e.id] = (
        20 + Double(i % columns) * (width + gapX), 20 + Double(i / columns) * rowHeight, heights[i]
      )
    }
    var lines = ""
    var labels = ""
    var drawn: Set<String> = []
    for e in entities {
      for r in e.relationships {
        guard let a = position[e.id], let b = position[r.destination] else { continue }
        let inverse = r.inverse.flatMap { model.entity(r.destination)?.property($0)?.name }
        let key = [e.name + "." + r.name, (model.entity(r.destination)?.name ?? "") + "." + (inverse ?? "")].sorted()
          .joined(separator: "|")
        guard drawn.insert(inverse == nil ? e.name + "." + r.name : key).inserted else { continue }
        let (x1, y1) = (a.x + width / 2, a.y + a.h / 2)
        let (x2, y2) = (b.x + width / 2, b.y + b.h / 2)
        let label = r.name + (r.isToMany ? " *" : "") + (inverse.map { " / " + $0 } ?? "")
        if r.destination == e.id {
          lines += "<path class=\"rel\" d=\"M\(x1 + width / 2) \(y1) c 40 -40 40 40 0 20\"/>"
          labels += "<text class=\"label\" x=\"\(x1 + width / 2 + 44)\" y=\"\(y1)\">\(escape(label))</text>"
        } else {
          lines += "<line class=\"rel\" x1=\"\(x1)\" y1=\"\(y1)\" x2=\"\(x2)\" y2=\"\(y2)\"/>"
          labels +=
            "<text class=\"label\" text-anchor=\"middle\" x=\"\((x1 + x2) / 2)\" y=\"\((y1 + y2) / 2 - 4)\">\(escape(label))</text>"
        }
      }
    }
    var boxes = ""
    for e in entities {
      guard let p = position[e.id] else { continue }
      boxes += "<g class=\"entity\"><rect x=\"\(p.x)\" y=\"\(p.y)\" width=\"\(width)\" height=\"\(p.h)\" rx=\"4\"/>"
      boxes += "<text class=\"title\" x=\"\(p.x + 8)\" y=\"\(p.y + 18)\">\(escape(e.name))"
      if let parent = e.parent.flatMap({ model.entity($0)?.name }) { boxes += " : \(escape(parent))" }
      boxes += "</text>"
      for (i, a) in e.attributes.enumerated() {
        let flags = (a.isPersonal ? " (personal)" : "") + (a.isIndexed ? " (indexed)" : "")
        boxes += "<text x=\"\(p.x + 8)\" y=\"\(p.y + 38 + Double(i) * lineHeight)\">"
        boxes += "\(escape(a.name)): \(escape(a.type.rawValue))\(flags)</text>"
      }
      boxes += "</g>"
    }
    let rows = (entities.count + columns - 1) / columns
    let w = 40 + Double(columns) * (width + gapX)
    let h = 40 + Double(rows) * rowHeight
    return
      "<svg id=\"diagram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(w)\" height=\"\(h)\" viewBox=\"0 0 \(w) \(h)\">\(lines)\(boxes)\(labels)</svg><p class=legend>* to-many; a / b: a relationship and its inverse</p>"
  }

  // MARK: - The timeline

  /// Commits per bucket as bars (events as a line), the marks as vertical lines.
  static func timeline(_ data: ReportData) -> String {
    guard let first = data.timeline.first, let last = data.timeline.last else { return "<p>The log is empty.</p>" }
    let (w, h, left, bottom) = (900.0, 260.0, 50.0, 40.0)
    let maxCommits = Double(data.timeline.map(\.commits).max() ?? 1)
    let maxEvents = Double(data.timeline.map(\.events).max() ?? 1)
    let barWidth = (w - left - 10) / Double(data.timeline.count)
    var svg = "<svg id=\"timeline-plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(w)\" height=\"\(h)\">"
    svg += "<line class=\"axis\" x1=\"\(left)\" y1=\"\(h - bottom)\" x2=\"\(w - 10)\" y2=\"\(h - bottom)\"/>"
    var points: [String] = []
    for (i, b) in data.timeline.enumerated() {
      let bh = (h - bottom - 20) * Double(b.commits) / maxCommits
      let x = left + Double(i) * barWidth
      svg +=
        "<rect class=\"bar\" x=\"\(x)\" y=\"\(h - bottom - bh)\" width=\"\(max(1, barWidth - 1))\" height=\"\(bh)\">"
      svg += "<title>\(escape(ISO8601.format(b.time))): \(b.commits) commits, \(b.events) events</title></rect>"
      points.append("\(x + barWidth / 2),\(h - bottom - (h - bottom - 20) * Double(b.events) / maxEvents)")
    }
    svg += "<polyline class=\"events\" points=\"\(points.joined(separator: " "))\"/>"
    for (i, m) in data.marks.enumerated() {
      let x = left + (Double(m.bucket) + 0.5) * barWidth
      svg += "<line class=\"mark\" x1=\"\(x)\" y1=\"10\" x2=\"\(x)\" y2=\"\(h - bottom)\"/>"
      svg +=
        "<text class=\"mark label\" x=\"\(min(x + 3, w - 300))\" y=\"\(22 + Double(i) * 14)\">\(escape(m.text))</text>"
    }
    svg += "<text x=\"\(left)\" y=\"\(h - 12)\">\(escape(ISO8601.format(first.time)))</text>"
    svg += "<text x=\"\(w - 10)\" y=\"\(h - 12)\" text-anchor=\"end\">\(escape(ISO8601.format(last.time)))</text>"
    svg += "<text x=\"4\" y=\"20\">\(Int(maxCommits))</text></svg>"
    return svg
      + "<p class=legend>Bars: commits per bucket of \(data.timeline.count) (hover for counts); line: events.</p>"
  }

  // MARK: - Style and script

  static let style = """
    body{font:14px system-ui,sans-serif;margin:0;color:#222}header{background:#24435c;color:#fff;padding:8px 16px}
    h1{font-size:18px;margin:4px 0}nav button{margin-right:6px;padding:4px 10px}section{display:none;padding:12px 16px}
    section.shown{display:block}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
    td.n{text-align:right}.entity rect{fill:#f4f8fb;stroke:#24435c}.entity text{font-size:12px}
    .entity .title{font-weight:bold}.rel{stroke:#888;fill:none}text.label{paint-order:stroke;stroke:#fff;stroke-width:4px}svg text{font-size:11px}.bar{fill:#6a9fc8}
    .events{fill:none;stroke:#c0392b}.mark{stroke:#e67e22}text.mark{fill:#b35900;stroke:none}.axis{stroke:#333}
    .legend{color:#666}.browser{display:flex;gap:24px;margin-top:10px}tr.changed td{background:#fff3c4}
    li.current{font-weight:bold}li{cursor:pointer;margin-bottom:4px}li pre{margin:2px 0;font-size:12px}
    """

  static let script = """
    "use strict";
    window.addEventListener("error", e => { document.body.dataset.error = String(e.message); });
    const data = JSON.parse(document.getElementById("data").textContent);
    const byId = new Map(data.objects.map(o => [o.id, o]));
    const $ = id => document.getElementById(id);
    function params() {
      const p = new URLSearchParams(location.hash.slice(1));
      return { view: p.get("view") || "summary", object: p.get("object"), at: p.get("at"), from: p.get("from") };
    }
    function setHash(changes) {
      const p = new URLSearchParams(location.hash.slice(1));
      for (const [k, v] of Object.entries(changes)) { if (v == null || v === "") p.delete(k); else p.set(k, v); }
      location.hash = p.toString();
    }
    function option(value, text) { const o = document.createElement("option"); o.value = value; o.textContent = text; return o; }
    function stateAt(o, commit) {
      let found = null;
      for (const h of o.history) { if (h.commit <= commit) found = h; }
      return found;
    }
    function render() {
      const p = params();
      for (const s of document.querySelectorAll("section")) s.classList.toggle("shown", s.id === p.view);
      if (p.view !== "objects") return;
      const o = byId.get(p.object) || data.objects[0];
      if (!o) { $("objects-note").textContent = "No object to show."; return; }
      $("object").value = o.id;
      const at = $("at"), from = $("from");
      at.replaceChildren(...o.history.map(h => option(h.commit, h.commit + " (" + h.time + ")")));
      from.replaceChildren(option("", "—"), ...o.history.map(h => option(h.commit, h.commit + " (" + h.time + ")")));
      const atCommit = p.at ? Number(p.at) : o.history[o.history.length - 1].commit;
      at.value = String(stateAt(o, atCommit)?.commit ?? o.history[0].commit);
      from.value = p.from || "";
      const now = stateAt(o, atCommit);
      const before = p.from ? stateAt(o, Number(p.from)) : null;
      const old = new Map((before ? before.state : []).map(([k, v]) => [k, v]));
      const rows = [];
      if (!now) rows.push("<tr><td colspan=2>not yet inserted at commit " + atCommit + "</td></tr>");
      else if (now.deleted) rows.push("<tr><td colspan=2>deleted</td></tr>");
      else for (const [k, v] of now.state.concat(before ? before.state.filter(([k]) => !now.state.some(([n]) => n === k)).map(([k]) => [k, "—"]) : [])) {
        const changed = before && old.get(k) !== v;
        const tr = document.createElement("tr");
        if (changed) tr.className = "changed";
        const th = document.createElement("th"); th.textContent = k;
        const td = document.createElement("td"); td.textContent = v;
        if (changed) td.title = "was " + (old.has(k) ? old.get(k) : "absent");
        tr.append(th, td);
        rows.push(tr);
      }
      $("state").replaceChildren(...rows.map(r => {
        if (typeof r !== "string") return r;
        const t = document.createElement("tbody"); t.innerHTML = r; return t;
      }));
      $("history").replaceChildren(...o.history.map(h => {
        const li = document.createElement("li");
        if (now && h.commit === now.commit) li.className = "current";
        li.textContent = "commit " + h.commit + "  " + h.time;
        for (const c of h.changes) { const pre = document.createElement("pre"); pre.textContent = c; li.append(pre); }
        li.addEventListener("click", () => setHash({ at: h.commit }));
        return li;
      }));
    }
    $("object").replaceChildren(...data.objects.map(o => option(o.id, o.id)));
    $("objects-note").textContent = data.objects.length + " objects of " + data.considered
      + (data.leftOut ? " (" + data.leftOut + " left out to keep the page within its size)" : "");
    $("object").addEventListener("change", e => setHash({ object: e.target.value, at: null, from: null }));
    $("at").addEventListener("change", e => setHash({ at: e.target.value }));
    $("from").addEventListener("change", e => setHash({ from: e.target.value }));
    for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => setHash({ view: b.dataset.view }));
    window.addEventListener("hashchange", render);
    render();
    document.body.dataset.ready = "yes";
    """
}
