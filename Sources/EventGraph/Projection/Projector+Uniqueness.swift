/// The uniqueness constraints, kept by the projector at the end of each commit.
extension Projector {
  /// Brings the `unique` entries of the objects touched so far up to date (every commit
  /// does, whether it writes the log or only a scratch projection).
  ///
  /// - Throws: ``StoreError/notUnique(object:entity:attributes:value:holder:)``.
  func keepUniqueness() throws {
    guard model.hasUniquenessConstraints, let db = dbs.unique else { return }
    park()
    var items: [UniquenessIndex.Item] = []
    for o in sortedTouched() {
      // Not `isNew(o)`: that is new to this projector, which may have seen commits before
      // this one (a replay's batch, the writer thread's) that gave the object its entries.
      let live = try record(o)
      // A deleted object's entity is still known: identities are kept.
      guard let entity = try live?.entity ?? reader.entity(of: o),
        !model.uniqueness[Int(entity.rawValue)].isEmpty
      else { continue }
      items.append(
        UniquenessIndex.Item(id: o, entity: entity, value: live.map { r in { try r.value($0) } }, isNew: false))
    }
    if items.isEmpty { return }
    try UniquenessIndex(txn: txn, db: db, model: model).update(items) { reader.display($0) }
  }
}
