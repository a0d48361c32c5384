extension Transaction {
  /// Inserts a record as a new object of its entity: the insert, the defaults of the
  /// attributes the record leaves `nil`, a `set` per value and a `link` per target.
  ///
  /// - Returns: the new object's identity.
  /// - Throws: ``RecordError`` when the record type does not fit the model (at its first
  ///   use), ``StoreError`` when a value does not fit its attribute (an `Int` beyond an
  ///   `int16`) or a target is not of the relationship's destination.
  @discardableResult
  public func insert<R: Record>(_ record: R) throws -> Ref<R> {
    try checkOpen()
    let schema = try RecordSchema.of(R.self, in: model)
    let w = try RecordWriter.encode(record, schema: schema)
    var values: [(PropertyID, Value)] = []
    values.reserveCapacity(schema.fields.count)
    for (i, f) in schema.fields.enumerated() {
      if f.attributeType != nil, let v = w.values[i] { values.append((f.property, v)) }
    }
    let id = try insert(schema.entity, valuesByID: values)
    for (i, f) in schema.fields.enumerated() {
      if let r = f.relationship, !w.targets[i].isEmpty { try setRelationship(id, r, to: w.targets[i]) }
    }
    return Ref(id)
  }

  /// Writes a record's values over an object's: a `set` for each attribute that changed
  /// and the links and unlinks of each relationship that changed, nothing for the rest.
  ///
  /// The entity's properties the record type does not have are left as they are.
  ///
  /// - Throws: ``ErrorCode/noSuchObject`` when the object is not a live object of the
  ///   record's entity (or a sub-entity), and the errors of ``insert(_:)->Ref<R>``.
  public func update<R: Record>(_ id: Ref<R>, _ record: R) throws {
    try checkOpen()
    let schema = try RecordSchema.of(R.self, in: model)
    guard let e = try liveEntityID(of: id.id), model.isKind(e, of: schema.entity.id) else {
      throw StoreError.noSuchObject(StoreError.ObjectName(entity: R.entityName, id: id.id))
    }
    let w = try RecordWriter.encode(record, schema: schema)
    for (i, f) in schema.fields.enumerated() {
      if let a = f.attribute {
        try set(id.id, attribute: a, w.values[i])
      } else if let r = f.relationship {
        try setRelationship(id.id, r, to: w.targets[i])
      }
    }
  }

  /// The record of a live object as this transaction sees it; `nil` when there is none.
  public func record<R: Record>(_ id: Ref<R>) throws -> Stored<R>? {
    try readRecord(id.id, as: R.self) { try version(of: $0) }
  }

  /// ``record(_:)`` by an untyped identity.
  public func record<R: Record>(_ type: R.Type, _ id: ObjectID) throws -> Stored<R>? {
    try record(Ref<R>(id))
  }
}
