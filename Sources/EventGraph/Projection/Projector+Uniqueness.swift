/// The uniqueness constraints, kept by the projector at the end of each commit.
///
/// At the end of a commit, each touched object of an entity with constraints gives back the
/// keys it held before the commit and takes those of its values now. The keys it held are
/// worked out from its record as `objects` holds it, which no commit changes before its end
/// (``writeObjects()``), unless a replay has not written it yet since an earlier commit of
/// its batch: then ``uniqueKeys`` has them, as that commit left them.
extension Projector {
  /// Brings the `unique` entries of the objects touched so far up to date (every commit
  /// does, whether it writes the log or only a scratch projection).
  ///
  /// - Throws: ``ErrorCode/notUnique``.
  /// - Parameter keepingKeys: whether to remember the keys for a next commit whose
  ///   objects' records are not written before it (a replay's batch).
  func keepUniqueness(keepingKeys: Bool = true) throws {
    guard model.hasUniquenessConstraints, let db = dbs.unique else { return }
    park()
    let index = UniquenessIndex(txn: txn, db: db, model: model)
    // Objects inserted in this commit with fresh identities held no keys before it.
    let inserted = insertedInCommit.count > 1 ? insertedInCommit.sorted() : insertedInCommit
    var next = 0
    var items: [UniquenessIndex.Item] = []
    for o in sortedTouched() {
      while next < inserted.count && inserted[next] < o { next += 1 }
      let isNew = next < inserted.count && inserted[next] == o
      let live = try record(o)
      // A deleted object's entity is still known: identities are kept.
      guard let entity = try live?.entity ?? reader.entity(of: o) else { continue }
      if model.uniqueness[Int(entity.rawValue)].isEmpty { continue }
      let values: ((PropertyID) throws -> Value?)? = live.map { r in { try r.value($0) } }
      // A new object held no keys: no list of nils is made for it (one per object inserted).
      let old = isNew ? [] : try deletedKeys[o] ?? keysBefore(o, entity, index)
      items.append(
        UniquenessIndex.Item(
          id: o, entity: entity, old: old, new: try index.keys(entity, values: values), value: values))
    }
    if items.isEmpty { return }
    try index.update(items) { reader.objectName($0) }
    if keepingKeys { for item in items { uniqueKeys[item.id] = item.new } }
  }

  /// Remembers the keys an object held before this commit, as it is deleted (its record
  /// then leaves `objects`).
  func rememberKeysBeforeDelete(_ o: ObjectID, _ entity: EntityID) throws {
    guard model.hasUniquenessConstraints, let db = dbs.unique, !model.uniqueness[Int(entity.rawValue)].isEmpty,
      deletedKeys[o] == nil
    else { return }
    deletedKeys[o] = try keysBefore(o, entity, UniquenessIndex(txn: txn, db: db, model: model))
  }

  /// The keys `o` held when this commit began.
  private func keysBefore(_ o: ObjectID, _ entity: EntityID, _ index: UniquenessIndex) throws -> UniquenessIndex.Keys {
    if let keys = uniqueKeys[o] { return keys }
    let stored = try load(o)
    return try index.keys(entity, values: stored.map { r in { try r.value($0) } })
  }
}
