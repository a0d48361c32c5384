/// Where a model version's objects are in a Core Data SQLite store, and whether the store's
/// tables fit the version at all.
///
/// Core Data's layout: `Z_PRIMARYKEY` numbers the entities (`Z_ENT`, `Z_NAME`, `Z_SUPER`,
/// `Z_MAX`); each inheritance root has a table `Z<ROOT>` holding its sub-entities' rows too
/// (`Z_PK`, `Z_ENT`, `Z_OPT`); an attribute is a column `Z<NAME>` (a later sibling's
/// attribute of a name already used gets `Z<NAME>1`, `Z<NAME>2`, …); a to-one is an integer
/// column `Z<REL>` holding the target's `Z_PK`, and when it is the inverse of an ordered
/// to-many, `Z_FOK_<REL>` keeps the order; a many-to-many (or a to-many without inverse) is a
/// join table `Z_<ent><REL>` with a column `Z_<ent><INVERSE>` per side (`Z_FOK_…` when ordered).
struct SQLiteLayout {
  struct AttributeColumn {
    let attribute: String
    let type: CoreDataAttributeType
    let column: String
  }

  struct ToOneColumn {
    let relationship: String
    let column: String
    /// The table of the target's inheritance root.
    let targetTable: Int
    /// Whether the relationship must have a target.
    let required: Bool
  }

  struct Table {
    let name: String
    let root: String
    /// Entity number (`Z_ENT`) → entity name, for the root and its sub-entities.
    var entities: [Int64: String]
    /// Per entity name: its stored attributes and to-ones (inherited ones included).
    var attributes: [String: [AttributeColumn]] = [:]
    var toOnes: [String: [ToOneColumn]] = [:]
    /// The order to read rows in: an ordered to-many's parent column then its order key,
    /// so each parent gets its children in order, one parent after another.
    var orderKey: [String] = []
    var columns: Set<String>
    var unknownColumns: [String] = []
    var maxPK: Int64 = 0
  }

  struct Join {
    let table: String
    /// The entity and relationship links are made on, and the table of its rows.
    let entity: String
    let relationship: String
    let sourceTable: Int
    let sourceColumn: String
    let targetTable: Int
    let targetColumn: String
    let orderColumn: String?
  }

  var tables: [Table] = []
  var joins: [Join] = []
  /// What is in the store and not imported, by name.
  var notes: [String] = []
}

/// A row of `Z_PRIMARYKEY`.
struct StoreEntity {
  let number: Int64
  let name: String
  let superNumber: Int64
  let max: Int64
}

extension SQLiteLayout {
  /// The layout of `model` in a store with these entities and tables (table → columns), or
  /// why it does not fit; `tableOf` names the table of a root entity whose table is not
  /// `Z<NAME>` (one renamed in the model, its table still under the old name).
  static func make(
    _ model: CoreDataModel, stored: Set<String>, entities: [StoreEntity], tables: [String: [String]],
    tableOf: [String: String] = [:]
  )
    -> Result<SQLiteLayout, LayoutMismatch>
  {
    var reasons: [String] = []
    let names = Set(model.entities.map(\.name))
    let storedNames = Set(entities.map(\.name))
    if names != storedNames {
      let missing = names.subtracting(storedNames).sorted()
      let extra = storedNames.subtracting(names).sorted()
      reasons.append(
        "Z_PRIMARYKEY's entities differ"
          + (missing.isEmpty ? "" : " (the model has \(missing.joined(separator: ", ")) and the store not)")
          + (extra.isEmpty ? "" : " (the store has \(extra.joined(separator: ", ")) and the model not)"))
      return .failure(LayoutMismatch(reasons: reasons))
    }
    let byName = Dictionary(model.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    let number = Dictionary(entities.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a })
    func root(_ e: String) -> String {
      var current = e
      var hops = 0
      while let p = byName[current]?.parent, hops <= byName.count {
        current = p
        hops += 1
      }
      return current
    }
    func lineage(_ e: String) -> [CoreDataEntity] {
      var chain: [CoreDataEntity] = []
      var current: String? = e
      while let c = current, let ce = byName[c], chain.count <= byName.count {
        chain.insert(ce, at: 0)
        current = ce.parent
      }
      return chain
    }
    var layout = SQLiteLayout()
    let roots = model.entities.filter { $0.parent == nil }.map(\.name)
    var tableIndex: [String: Int] = [:]
    for r in roots {
      let table = tableOf[r] ?? "Z" + r.uppercased()
      guard let columns = tables[table] else {
        reasons.append("no table \(table) for entity \(r)")
        continue
      }
      tableIndex[r] = layout.tables.count
      let members = entities.filter { root($0.name) == r }
      layout.tables.append(
        Table(
          name: table, root: r,
          entities: Dictionary(members.map { ($0.number, $0.name) }, uniquingKeysWith: { a, _ in a }),
          columns: Set(columns), maxPK: members.map(\.max).max() ?? 0))
    }
    guard reasons.isEmpty else { return .failure(LayoutMismatch(reasons: reasons)) }
    for t in layout.tables.indices {
      var used: [String: Int] = [:]
      var columnOf: [String: String] = [:]  // "Entity.property" → column
      var known: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
      let members = layout.tables[t].entities.sorted { $0.key < $1.key }.map(\.value)
      // Each declared property's column, in entity-number order so siblings' suffixes count up.
      for m in members {
        guard let e = byName[m] else { continue }
        for a in e.attributes where !a.isTransient && stored.contains("\(m).\(a.name)") {
          columnOf["\(m).\(a.name)"] = column(a.name, &used)
        }
        for r in e.relationships where !r.isToMany && !r.isTransient {
          columnOf["\(m).\(r.name)"] = column(r.name, &used)
        }
      }
      for m in members {
        var attrs: [AttributeColumn] = []
        var toOnes: [ToOneColumn] = []
        for e in lineage(m) {
          for a in e.attributes where stored.contains("\(e.name).\(a.name)") && !a.isTransient {
            let c = columnOf["\(e.name).\(a.name)"] ?? "Z" + a.name.uppercased()
            guard layout.tables[t].columns.contains(c) else {
              reasons.append("table \(layout.tables[t].name) has no column \(c) for \(e.name).\(a.name)")
              continue
            }
            known.insert(c)
            attrs.append(AttributeColumn(attribute: a.name, type: a.type, column: c))
          }
          for r in e.relationships where !r.isToMany && !r.isTransient {
            let c = columnOf["\(e.name).\(r.name)"] ?? "Z" + r.name.uppercased()
            guard layout.tables[t].columns.contains(c), let target = tableIndex[root(r.destination)] else {
              reasons.append("table \(layout.tables[t].name) has no column \(c) for \(e.name).\(r.name)")
              continue
            }
            known.insert(c)
            // A to-one whose inverse is also a to-one is stored on both sides: linked from one.
            if let inv = r.inverse,
              let back = byName[r.destination].map({ d in lineage(d.name) })?
                .flatMap(\.relationships).first(where: { $0.name == inv }), !back.isToMany,
              (r.destination, inv) < (e.name, r.name)
            {
              continue
            }
            toOnes.append(ToOneColumn(relationship: r.name, column: c, targetTable: target, required: !r.isOptional))
            let fok = "Z_FOK_" + r.name.uppercased()
            if layout.tables[t].columns.contains(fok) {
              known.insert(fok)
              if layout.tables[t].orderKey.isEmpty { layout.tables[t].orderKey = [c, fok] }
            }
          }
        }
        layout.tables[t].attributes[m] = attrs
        layout.tables[t].toOnes[m] = toOnes
      }
      // Core Data's own columns for a to-one's target entity (`Z3PARENT`) are not data.
      let toOneNames = Set(members.compactMap { byName[$0] }.flatMap(\.relationships).map { $0.name.uppercased() })
      layout.tables[t].unknownColumns = layout.tables[t].columns.subtracting(known).filter { c in
        !(c.hasPrefix("Z") && toOneNames.contains(String(c.dropFirst().drop { $0.isNumber })))
      }.sorted()
    }
    layout.joins = joins(model, number: number, tables: tables, tableIndex: tableIndex, root: root, reasons: &reasons)
    guard reasons.isEmpty else { return .failure(LayoutMismatch(reasons: reasons)) }
    for t in layout.tables where !t.unknownColumns.isEmpty {
      layout.notes.append(
        "table \(t.name): columns the model does not know, ignored: \(t.unknownColumns.joined(separator: ", "))")
    }
    return .success(layout)
  }

  /// The column of a property named `name` in a table: `Z<NAME>`, or with the next suffix
  /// when an earlier sibling took it.
  private static func column(_ name: String, _ used: inout [String: Int]) -> String {
    let base = "Z" + name.uppercased()
    let k = used[base, default: 0]
    used[base] = k + 1
    return k == 0 ? base : base + String(k)
  }

  private static func joins(
    _ model: CoreDataModel, number: [String: Int64], tables: [String: [String]], tableIndex: [String: Int],
    root: (String) -> String, reasons: inout [String]
  ) -> [Join] {
    let byName = Dictionary(model.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    var result: [Join] = []
    for e in model.entities {
      for r in e.relationships where r.isToMany && !r.isTransient {
        let inverse = r.inverse.flatMap { inv in byName[r.destination]?.relationships.first { $0.name == inv } }
        if let inverse, !inverse.isToMany { continue }  // one-to-many: the to-one side's column
        // Many-to-many: one join table for both sides, linked from the side whose table is named.
        guard let a = number[e.name], let b = number[r.destination] else { continue }
        let rn = r.name.uppercased()
        let sn = (inverse?.name ?? "").uppercased()
        let mine = "Z_\(a)\(rn)"
        let theirs = "Z_\(b)\(sn)"
        if inverse != nil, tables[mine] == nil, tables[theirs] != nil { continue }  // linked from the other side
        guard let columns = tables[mine], let sourceTable = tableIndex[root(e.name)],
          let targetTable = tableIndex[root(r.destination)]
        else {
          reasons.append("no join table \(mine) for \(e.name).\(r.name)")
          continue
        }
        let targetColumn = "Z_\(b)\(rn)"
        let sourceColumn =
          inverse != nil ? "Z_\(a)\(sn)" : (columns.first { $0 != targetColumn && !$0.hasPrefix("Z_FOK_") } ?? "")
        guard columns.contains(sourceColumn), columns.contains(targetColumn) else {
          reasons.append(
            "join table \(mine) has no columns \(sourceColumn) and \(targetColumn) for \(e.name).\(r.name)")
          continue
        }
        let order = "Z_FOK_\(b)\(rn)"
        result.append(
          Join(
            table: mine, entity: e.name, relationship: r.name, sourceTable: sourceTable, sourceColumn: sourceColumn,
            targetTable: targetTable, targetColumn: targetColumn, orderColumn: columns.contains(order) ? order : nil))
      }
    }
    return result
  }
}

/// Why a model version does not fit a store.
struct LayoutMismatch: Error {
  let reasons: [String]
}
