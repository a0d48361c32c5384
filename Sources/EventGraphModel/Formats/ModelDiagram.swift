internal import EventGraphText

/// Graphviz DOT for models: entities with their attributes, relationships with their
/// inverses and to-many arity, inheritance.
extension Model {
  /// A standalone DOT graph of the model (`dot -Tsvg` draws it).
  public func dot() -> String {
    "digraph \(DOT.quote("\(name) v\(version)")) {\n  rankdir=LR;\n  node [shape=record, fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n"
      + dotBody(prefix: "") + "}\n"
  }

  /// The nodes and edges, with node names prefixed (so two versions can share a graph).
  public func dotBody(prefix: String, indent: String = "  ") -> String {
    var out = ""
    for e in entities {
      let attrs = e.description.attributes.map { a in
        "\(a.name): \(a.type.rawValue)\(a.isOptional ? "?" : "")\(a.isIndexed ? " (indexed)" : "")\(a.isPersonal ? " (personal)" : "")"
      }
      var title = e.isAbstract ? "«abstract» \(e.name)" : e.name
      if let s = e.description.subject { title += " (subject: \(s))" }
      out +=
        "\(indent)\(DOT.quote(prefix + e.name)) [label=\(DOT.quote("{\(DOT.record(title))|\(attrs.map { DOT.record($0) + "\\l" }.joined())}"))];\n"
    }
    for e in entities {
      if let p = e.parent.flatMap({ entity($0) }) {
        out +=
          "\(indent)\(DOT.quote(prefix + e.name)) -> \(DOT.quote(prefix + p.name)) [arrowhead=empty, style=dashed];\n"
      }
      for r in e.description.relationships {
        guard let own = e.relationship(named: r.name), let dest = entity(own.destination) else { continue }
        let back = own.inverse.flatMap { dest.property($0) }.flatMap { p -> Relationship? in
          if case .relationship(let x) = p.kind { return x }
          return nil
        }
        // A pair with an inverse is drawn once, from the side whose name sorts first.
        if let back, (dest.name, back.name) < (e.name, r.name),
          dest.description.relationships.contains(where: { $0.name == back.name })
        {
          continue
        }
        var label = r.name + (own.isToMany ? (own.isOrdered ? " [ordered *]" : " [*]") : "")
        if let back { label += " / " + back.name + (back.isToMany ? " [*]" : "") }
        if own.deleteRule != .nullify { label += " (\(own.deleteRule.rawValue))" }
        let head = own.isToMany ? "crow" : "tee"
        let tail = back.map { $0.isToMany ? "crow" : "tee" } ?? "none"
        out +=
          "\(indent)\(DOT.quote(prefix + e.name)) -> \(DOT.quote(prefix + dest.name)) [label=\(DOT.quote(label)), dir=both, arrowhead=\(head), arrowtail=\(tail)];\n"
      }
    }
    return out
  }
}
