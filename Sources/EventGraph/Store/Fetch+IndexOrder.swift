import LMDB

/// A fetch whose order an index gives, that stops once its page is full.
///
/// Served when the fetch has a limit and sorts ascending by one attribute of the entity
/// itself that is indexed and required (so every object is in the index), of a type whose
/// index order is the sort's (strings, 16- and 32-bit integers, doubles, floats, dates,
/// booleans), on an entity without sub-entities (one range of the index). The index is
/// read in order, ties in identity order as the sort keeps them; the predicate is checked on
/// each object until `offset + limit` match. A string cut short in the index (over 256
/// bytes), whose order the index does not know, sends the fetch back to the full path.
extension Snapshot {
  /// The page, and how many objects were examined; `nil` when the index cannot give it.
  func fetchInIndexOrder(
    _ e: Entity, _ sort: [(SortPath, Bool)], limit: Int?, offset: Int,
    matches: (ObjectID) throws -> Bool
  ) throws -> (objects: [ObjectID], examined: Int)? {
    guard let limit, sort.count == 1, let (path, ascending) = sort.first, ascending, path.relationships.isEmpty
    else { return nil }
    let a = path.attribute
    guard a.isIndexed, !a.isOptional, model.descendants(of: e.id).count == 1 else { return nil }
    switch a.type {
    case .string, .int16, .int32, .double, .float, .date, .boolean: break
    default: return nil
    }
    let wanted = max(0, offset) + max(0, limit)
    var page: [ObjectID] = []
    var examined = 0
    var cut = false
    let prefix = IndexKey.prefix(entity: e.id, attribute: a.id)
    if wanted > 0 {
      try reader.txn.forEach(reader.dbs.index, from: prefix) { key, _ in
        guard key.count >= prefix.count + 8, key.starts(with: prefix) else { return false }
        // A string's key ends 00 02 (before the object) when the string was cut.
        if a.type == .string, key[key.count - 9] == 2, key[key.count - 10] == 0 {
          cut = true
          return false
        }
        guard let o = KeyField.u64(key, at: key.count - 8) else { return true }
        examined += 1
        if try matches(ObjectID(o)) { page.append(ObjectID(o)) }
        return page.count < wanted
      }
    }
    if cut { return nil }
    return (Array(page.dropFirst(max(0, offset))), examined)
  }
}
