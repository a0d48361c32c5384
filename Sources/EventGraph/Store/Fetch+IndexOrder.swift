internal import LMDB

/// A fetch whose order an index gives, that stops once its page is full.
///
/// Served when the fetch has a limit and sorts by one attribute of the entity itself that is
/// indexed, of a type whose index order is the sort's (strings, the integers, doubles,
/// floats, decimals, dates, booleans, UUIDs, binary data):
///
/// - ascending or descending; the index is read forwards or backwards, and the objects of
///   one sort value are taken in identity order, as the sort keeps ties;
/// - a required attribute, or an optional one sorted descending: objects without a value,
///   which the index does not hold, come last, so the index serves every page it can fill
///   (one it cannot fill goes back to the full path). Ascending, they would come first, and
///   only a scan finds them;
/// - an entity with sub-entities reads one range per entity, at most a page from each, and
///   merges them.
///
/// The predicate is checked on each object in order until `offset + limit` match. A string
/// cut short in the index (over 256 bytes), whose order the index does not know, sends the
/// fetch back to the full path. An `int64` is ordered as the sort orders numbers, as a
/// double: two values a double cannot tell apart (beyond 2^53) are one sort value.
extension Snapshot {
  /// The page, and how many objects were examined; `nil` when the index cannot give it.
  func fetchInIndexOrder(
    _ e: Entity, _ sort: [(SortPath, Bool)], limit: Int?, offset: Int,
    matches: (ObjectID) throws -> Bool
  ) throws -> (objects: [ObjectID], examined: Int)? {
    guard let limit, sort.count == 1, let (path, ascending) = sort.first, path.relationships.isEmpty
    else { return nil }
    let a = path.attribute
    // A personal attribute's index is in the order of its blind hashes, not its values.
    guard a.isIndexed, !a.isPersonal, !(a.isOptional && ascending) else { return nil }
    switch a.type {
    case .string, .int16, .int32, .int64, .double, .float, .decimal, .date, .boolean, .uuid, .binary: break
    default: return nil
    }
    // Saturating: `limit: Int.max` with an offset asks for every match, not a trap.
    let (sum, overflow) = max(0, offset).addingReportingOverflow(max(0, limit))
    let wanted = overflow ? Int.max : sum
    guard wanted > 0 else { return ([], 0) }
    var examined = 0
    var found: [IndexOrderEntry] = []
    let kinds = model.descendants(of: e.id)
    for kind in kinds {
      let range = IndexOrderRange(
        prefix: IndexKey.prefix(entity: kind, attribute: a.id), type: a.type, ascending: ascending)
      guard let page = try range.first(wanted, in: reader, examined: &examined, matches: matches) else { return nil }
      found += page
    }
    // Objects without a value come after every page the index holds; one not filled may
    // need them.
    if a.isOptional && found.count < wanted { return nil }
    if kinds.count > 1 { found.sort { $0.precedes($1, ascending: ascending) } }
    return (found.prefix(wanted).dropFirst(max(0, offset)).map(\.object), examined)
  }
}

/// An object of an index range with its sort value's bytes.
struct IndexOrderEntry {
  /// The bytes that order the sort value (equal bytes: one value of the sort).
  let order: [UInt8]
  let object: ObjectID

  func precedes(_ other: Self, ascending: Bool) -> Bool {
    if order != other.order {
      return ascending
        ? order.lexicographicallyPrecedes(other.order) : other.order.lexicographicallyPrecedes(order)
    }
    return object < other.object
  }
}

/// One entity's index range of one attribute, read in a sort's direction.
struct IndexOrderRange {
  let prefix: [UInt8]
  let type: AttributeType
  let ascending: Bool

  private enum Step {
    case entry(IndexOrderEntry)
    case end
    /// A string cut short: its order is not the index's.
    case cut
    case skip
  }

  /// The first `wanted` objects of the range in the sort's order for which `matches`
  /// holds (fewer when the range ends); `nil` when a cut string stops the read.
  ///
  /// Each object is checked in the sort's order, counted in `examined`, until the page is
  /// full. The objects of one sort value must come in identity order: ascending, the keys of
  /// one value give them so; descending, each value's keys are read forwards from its first
  /// (then the read goes on backwards from before it), so a value many objects share costs
  /// only the objects the page takes. For an `int64`, whose keys of one double may be
  /// several, the objects of each double are gathered and sorted first.
  func first<T: TransactionReading>(
    _ wanted: Int, in reader: GraphReader<T>, examined: inout Int, matches: (ObjectID) throws -> Bool
  ) throws -> [IndexOrderEntry]? {
    var found: [IndexOrderEntry] = []
    /// Checks one object; `true` once the page is full.
    func check(_ o: ObjectID, _ order: [UInt8]) throws -> Bool {
      examined += 1
      if try matches(o) { found.append(IndexOrderEntry(order: order, object: o)) }
      return found.count == wanted
    }
    var group: [ObjectID] = []
    var groupOrder: [UInt8] = []
    /// Checks the gathered group (an `int64`'s); `true` once the page is full.
    func flush() throws -> Bool {
      group.sort()
      for o in group where try check(o, groupOrder) { return true }
      group.removeAll(keepingCapacity: true)
      return false
    }
    return try reader.txn.withCursor(reader.dbs.index) { cursor -> [IndexOrderEntry]? in
      var more = try ascending ? cursor.seek(prefix) : start(backwards: cursor)
      while more {
        switch try cursor.withCurrent({ key, _ in step(key) }) {
        case .end: more = false
        case .cut: return nil
        case .skip: break
        case .entry(let entry) where type == .int64:
          if entry.order != groupOrder {
            if !group.isEmpty, try flush() { return found }
            groupOrder = entry.order
          }
          group.append(entry.object)
        case .entry(let entry) where ascending:
          if try check(entry.object, entry.order) { return found }
        case .entry(let entry):
          // Descending: this value's keys forwards from its first, then on from before it.
          let first = prefix + entry.order
          var forwards = try cursor.seek(first)
          while forwards, case .entry(let e) = try cursor.withCurrent({ key, _ in step(key) }), e.order == entry.order {
            if try check(e.object, e.order) { return found }
            forwards = try cursor.next()
          }
          more = try cursor.seek(first) ? cursor.previous() : cursor.last()
          continue
        }
        if more { more = try ascending ? cursor.next() : cursor.previous() }
      }
      if !group.isEmpty { _ = try flush() }
      return found
    }
  }

  /// Puts the cursor on the range's last entry (or before it, when the range is empty).
  private func start(backwards cursor: borrowing Cursor) throws -> Bool {
    // The first key past the range: the prefix as a number, plus one.
    var past = prefix
    var i = past.count - 1
    while i >= 0 {
      if past[i] < 0xFF {
        past[i] += 1
        break
      }
      past[i] = 0
      i -= 1
    }
    if i < 0 { return try cursor.last() }
    return try cursor.seek(past) ? cursor.previous() : cursor.last()
  }

  private func step(_ key: UnsafeRawBufferPointer) -> Step {
    guard key.count >= prefix.count + 8, key.starts(with: prefix) else { return .end }
    // A string's key ends 00 02 (before the object) when the string was cut.
    if type == .string, key[key.count - 9] == 2, key[key.count - 10] == 0 { return .cut }
    guard let o = KeyField.u64(key, at: key.count - 8) else { return .skip }
    var order = Array(key[prefix.count..<(key.count - 8)])
    // The sort compares numbers as doubles: an int64's key becomes its double's.
    if type == .int64, order.count == 8, let u = KeyField.u64(key, at: prefix.count) {
      order = IndexKey.encode(.double(Double(Int64(bitPattern: u ^ (1 << 63)))))
    }
    return .entry(IndexOrderEntry(order: order, object: ObjectID(o)))
  }
}
