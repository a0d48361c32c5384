extension GraphReading {
  /// The record of a live object, read by the record type's schema, with `version`'s
  /// answer; `nil` when the object does not exist or is not of the record's entity.
  func readRecord<R: Record>(_ id: ObjectID, as type: R.Type, version: (ObjectID) throws -> UInt64) throws
    -> Stored<R>?
  {
    let schema = try RecordSchema.of(R.self, in: model)
    guard let state = try object(id), model.isKind(state.entity, of: schema.entity.id) else { return nil }
    return try Self.decodeRecord(state, schema: schema, version: try version(id)) { try related($0, $1) }
  }

  /// An object's state as a record of `R`, its relationships read by `related`.
  static func decodeRecord<R: Record>(
    _ state: ObjectState, schema: RecordSchema, version: UInt64,
    related: @escaping (ObjectID, PropertyID) throws -> [ObjectID]
  ) throws -> Stored<R> {
    let reader = RecordReader(schema: schema, state: state, related: related, recordType: R.self)
    return Stored(id: Ref(state.id), version: version, record: try R(reading: RecordValues(reader: reader)))
  }
}
