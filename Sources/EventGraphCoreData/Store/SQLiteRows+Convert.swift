import EventGraph
import Foundation

/// A row of a Core Data store that breaks the model: where it is and what is wrong.
struct BadRow: Error, CustomStringConvertible {
  let table: String
  let row: String
  let message: String
  var description: String { "table \(table) \(row): \(message)" }
}

/// Reads one root table's rows as objects to insert: the query over the columns of its
/// entities, and each column's value in the attribute's type.
struct TableReader {
  struct Column {
    let attribute: Attribute
    let type: CoreDataAttributeType
    let column: String
    let index: Int32
    /// For binary data: the index of its `hex()`.
    let hexIndex: Int32?
    let required: Bool
  }

  struct ToOne {
    let relationship: String
    let column: String
    let index: Int32
    let targetTable: Int
    let required: Bool
  }

  struct Member {
    let entity: Entity
    let columns: [Column]
    let toOnes: [ToOne]
  }

  let table: SQLiteLayout.Table
  let tableNumber: Int
  let members: [Int64: Member]
  /// The rows in the order they are written (an ordered to-many's order key first).
  let sql: String
  /// The rows in any order, for the check.
  let checkSQL: String

  init(_ table: SQLiteLayout.Table, number: Int, model: Model) throws(CoreDataError) {
    self.table = table
    self.tableNumber = number
    var expressions = ["Z_PK", "Z_ENT"]
    var index: [String: Int32] = [:]
    func slot(_ expression: String) -> Int32 {
      if let i = index[expression] { return i }
      expressions.append(expression)
      index[expression] = Int32(expressions.count - 1)
      return Int32(expressions.count - 1)
    }
    var members: [Int64: Member] = [:]
    for (number, name) in table.entities {
      guard let e = model.entity(named: name) else { continue }
      var columns: [Column] = []
      for c in table.attributes[name] ?? [] {
        guard let a = e.attribute(named: c.attribute) else { continue }
        let q = SQLiteStore.quote(c.column)
        let bytes = [.binary, .transformable, .uuid].contains(c.type)
        columns.append(
          Column(
            attribute: a, type: c.type, column: c.column, index: slot(q), hexIndex: bytes ? slot("hex(\(q))") : nil,
            required: !a.isOptional && a.defaultValue == nil))
      }
      let toOnes = (table.toOnes[name] ?? []).map { t in
        ToOne(
          relationship: t.relationship, column: t.column, index: slot(SQLiteStore.quote(t.column)),
          targetTable: t.targetTable, required: t.required)
      }
      members[number] = Member(entity: e, columns: columns, toOnes: toOnes)
    }
    self.members = members
    let order = table.orderKey.map { SQLiteStore.quote($0) + ", " }.joined()
    checkSQL = "SELECT \(expressions.joined(separator: ", ")) FROM \(SQLiteStore.quote(table.name))"
    sql = checkSQL + " ORDER BY \(order)Z_PK"
  }

  func bad(_ pk: Int64, _ message: String) -> BadRow { BadRow(table: table.name, row: "Z_PK \(pk)", message: message) }

  /// The object of the current row; `exists` says whether a target row is there (and kept).
  func object(_ rows: SQLiteRows, exists: (Int, Int64) -> Bool) throws(BadRow) -> PendingObject {
    let pk = rows.int(0)
    let ent = rows.int(1)
    guard let m = members[ent] else {
      throw bad(pk, "Z_ENT \(ent) is not an entity stored in this table")
    }
    guard !m.entity.isAbstract else { throw bad(pk, "Z_ENT \(ent) is the abstract entity \(m.entity.name)") }
    var values: [(Attribute, Value?)] = []
    values.reserveCapacity(m.columns.count)
    for c in m.columns {
      let v = try value(rows, c, pk)
      if v == nil && c.required {
        throw bad(pk, "\(c.column): NULL in \(m.entity.name).\(c.attribute.name), which is required")
      }
      values.append((c.attribute, v))
    }
    var links: [(String, ObjectKey)] = []
    for t in m.toOnes {
      guard rows.kind(t.index) != .null else {
        if t.required { throw bad(pk, "\(t.column): NULL in \(m.entity.name).\(t.relationship), which is required") }
        continue
      }
      guard rows.kind(t.index) == .integer else { throw bad(pk, "\(t.column): not an integer key") }
      let target = rows.int(t.index)
      guard exists(t.targetTable, target) else {
        throw bad(pk, "\(t.column): \(m.entity.name).\(t.relationship) names row \(target), which is not there")
      }
      links.append((t.relationship, ObjectKey(table: t.targetTable, row: target)))
    }
    return PendingObject(key: ObjectKey(table: tableNumber, row: pk), entity: m.entity, values: values, links: links)
  }

  /// A column's value in its attribute's type: integers range-checked, booleans 0 or 1,
  /// dates from seconds since 2001.
  private func value(_ rows: SQLiteRows, _ c: Column, _ pk: Int64) throws(BadRow) -> Value? {
    let kind = rows.kind(c.index)
    if kind == .null { return nil }
    func fail(_ what: String) -> BadRow { bad(pk, "\(c.column): \(what) for \(c.attribute.name) (\(c.type.rawValue))") }
    switch c.type {
    case .integer16, .integer32, .integer64, .boolean:
      guard kind == .integer else { throw fail("a \(kind) value") }
      let n = rows.int(c.index)
      switch c.type {
      case .integer16:
        guard let v = Int16(exactly: n) else { throw fail("\(n) does not fit Integer 16") }
        return .int16(v)
      case .integer32:
        guard let v = Int32(exactly: n) else { throw fail("\(n) does not fit Integer 32") }
        return .int32(v)
      case .boolean:
        guard n == 0 || n == 1 else { throw fail("\(n) is not a boolean (0 or 1)") }
        return .boolean(n == 1)
      default: return .int64(n)
      }
    case .double, .float, .date:
      guard kind == .integer || kind == .real else { throw fail("a \(kind) value") }
      let d = rows.double(c.index)
      guard d.isFinite else { throw fail("\(d)") }
      if c.type == .date { return .date(Date(timeIntervalSince1970: d + EventGraphDates.epoch2001)) }
      return c.type == .float ? .float(Float(d)) : .double(d)
    case .decimal:
      let text = rows.text(c.index)
      guard let d = Decimal(string: text) else { throw fail("'\(text)' is not a number") }
      return .decimal(d)
    case .string, .uri:
      let text = rows.text(c.index)
      return c.type == .uri ? .uri(text) : .string(text)
    case .binary, .transformable:
      guard kind == .blob, let h = c.hexIndex else { throw fail("a \(kind) value") }
      return .binary(SQLiteStore.bytes(hex: rows.text(h)))
    case .uuid:
      if kind == .blob, let h = c.hexIndex {
        let b = SQLiteStore.bytes(hex: rows.text(h))
        guard b.count == 16 else { throw fail("\(b.count) bytes, not a UUID's 16") }
        return .uuid(
          UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
          ))
      }
      guard let u = UUID(uuidString: rows.text(c.index)) else { throw fail("not a UUID") }
      return .uuid(u)
    case .undefined, .objectID, .composite:
      throw fail("a type with no EventGraph value")
    }
  }
}
