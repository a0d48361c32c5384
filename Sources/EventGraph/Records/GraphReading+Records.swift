extension GraphReading {
  /// The record of a live object, read by the record type's schema, with `version`'s
  /// answer; `nil` when the object does not exist or is not of the record's entity.
  func readRecord<R: Record>(_ id: ObjectID, as type: R.Type, version: (ObjectID) throws -> UInt64) throws
    -> Stored<R>?
  {
    let schema = try RecordSchema.of(R.self, in: model)
    guard let state = try object(id), model.isKind(state.entity, of: schema.entity.id) else { return nil }
    return try decodeRecord(state, schema: schema, version: try version(id))
  }

  /// An object's state as a record of `R`.
  func decodeRecord<R: Record>(_ state: ObjectState, schema: RecordSchema, version: UInt64) throws -> Stored<R> {
    let reader = RecordReader(
      schema: schema, state: state, related: { try self.related($0, $1) }, recordType: R.self)
    return Stored(id: Ref(state.id), version: version, record: try R(from: reader))
  }
}
