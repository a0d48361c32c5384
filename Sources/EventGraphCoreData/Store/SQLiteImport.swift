import EventGraph

/// Which rows of a table exist and are kept, as bits in pages of 32,768 rows.
struct RowSet {
  private var pages: [Int64: [UInt64]] = [:]

  func contains(_ row: Int64) -> Bool {
    guard let page = pages[row >> 15] else { return false }
    let bit = Int(row & 32767)
    return page[bit >> 6] & (1 << UInt64(bit & 63)) != 0
  }

  mutating func insert(_ row: Int64) {
    let bit = Int(row & 32767)
    pages[row >> 15, default: [UInt64](repeating: 0, count: 512)][bit >> 6] |= 1 << UInt64(bit & 63)
  }

  mutating func remove(_ row: Int64) {
    let bit = Int(row & 32767)
    pages[row >> 15]?[bit >> 6] &= ~(1 << UInt64(bit & 63))
  }
}

/// The import of a SQLite store's rows, in two passes over its tables: a check of every row
/// (nothing is written while a row breaks the model, unless it is to be skipped), then the
/// objects, table by table in batches, then the links that waited and the join tables.
struct SQLiteImport {
  let source: SQLiteStore
  let layout: SQLiteLayout
  let readers: [TableReader]
  var kept: [RowSet]
  var problems: [String] = []

  init(source: SQLiteStore, layout: SQLiteLayout, model: Model) throws(CoreDataError) {
    self.source = source
    self.layout = layout
    var readers: [TableReader] = []
    for (i, t) in layout.tables.enumerated() { readers.append(try TableReader(t, number: i, model: model)) }
    self.readers = readers
    self.kept = Array(repeating: RowSet(), count: layout.tables.count)
  }

  /// Checks every row; returns the rows that break the model (all of them when `lenient`,
  /// after which they are left out, and so are rows that name them).
  mutating func check(lenient: Bool) throws(CoreDataError) -> [String] {
    for (i, t) in layout.tables.enumerated() {
      let rows = try source.db.query("SELECT Z_PK FROM \(SQLiteStore.quote(t.name))")
      while try rows.next() { kept[i].insert(rows.int(0)) }
    }
    var bad: [String] = []
    // A skipped row can make a row that names it bad: check again until nothing changes.
    for _ in 0..<16 {
      var found = 0
      for (i, r) in readers.enumerated() {
        let rows = try source.db.query(r.checkSQL)
        while try rows.next() {
          let pk = rows.int(0)
          guard kept[i].contains(pk) else { continue }
          do {
            _ = try r.object(rows) { kept[$0].contains($1) }
          } catch {
            bad.append(error.description)
            found += 1
            kept[i].remove(pk)
          }
        }
      }
      if found == 0 || !lenient { break }
    }
    for j in layout.joins {
      let rows = try source.db.query(joinSQL(j))
      while try rows.next() {
        let (s, t) = (rows.int(0), rows.int(1))
        if !kept[j.sourceTable].contains(s) || !kept[j.targetTable].contains(t) {
          bad.append(
            "table \(j.table) row (\(j.sourceColumn) \(s), \(j.targetColumn) \(t)): a link to a row that is not there")
        }
      }
    }
    return bad
  }

  func joinSQL(_ j: SQLiteLayout.Join) -> String {
    let q = SQLiteStore.quote
    return "SELECT \(q(j.sourceColumn)), \(q(j.targetColumn)) FROM \(q(j.table)) ORDER BY \(q(j.sourceColumn))"
      + (j.orderColumn.map { ", " + q($0) } ?? "")
  }

  /// Writes the kept rows' objects and links.
  func write(into sink: ObjectSink) throws {
    for i in tableOrder() {
      let r = readers[i]
      let rows = try source.db.query(r.sql)
      while try rows.next() {
        guard kept[i].contains(rows.int(0)) else { continue }
        try sink.add(try r.object(rows) { kept[$0].contains($1) })
      }
    }
    try sink.linkDeferred()
    for j in layout.joins {
      let rows = try source.db.query(joinSQL(j))
      while try rows.next() {
        let (s, t) = (rows.int(0), rows.int(1))
        guard kept[j.sourceTable].contains(s), kept[j.targetTable].contains(t) else { continue }
        try sink.addLink(
          ObjectKey(table: j.sourceTable, row: s), j.relationship, ObjectKey(table: j.targetTable, row: t))
      }
    }
  }

  /// Tables whose rows others name come first, so most to-ones link in their own commit.
  func tableOrder() -> [Int] {
    var order: [Int] = []
    var state = [Int](repeating: 0, count: readers.count)  // 0 new, 1 visiting, 2 done
    func visit(_ i: Int) {
      guard state[i] == 0 else { return }
      state[i] = 1
      for m in readers[i].members.values {
        for t in m.toOnes where t.targetTable != i { visit(t.targetTable) }
      }
      state[i] = 2
      order.append(i)
    }
    for i in readers.indices { visit(i) }
    return order
  }
}
