// The model, its values and events (EventGraphModel) and the query language
// (EventGraphQuery) are modules of their own so that the compiler keeps them free of
// storage; to a user they are part of the store's API. Re-exported here, once, so that
// `import EventGraph` keeps giving all of it, as it did before the split: the CLI, the
// other modules of the package and every user's code see one module.
@_exported import EventGraphModel
@_exported import EventGraphQuery
