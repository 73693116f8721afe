//! `/ui` sessions: an opaque id that is not the token, kept hashed, ended by logout, by
//! expiry and by revoking its token.

use proven_store::TokenCheck;
use proven_store::testing::{Backend, TestStore};

proven_store::both_backends!(a_session_is_an_opaque_id_ended_by_logout_expiry_and_revocation,);

async fn a_session_is_an_opaque_id_ended_by_logout_expiry_and_revocation(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    let (tenant, token) = store.create_tenant("acme", 4).await.expect("tenant");
    assert_eq!(
        store
            .open_session("pvn_not_a_token", 60)
            .await
            .expect("open"),
        None,
        "no session for a token that is not live"
    );
    let id = store
        .open_session(&token, 60)
        .await
        .expect("open")
        .expect("a live token opens one");
    assert!(id.starts_with("pvs_") && id.len() >= 64, "{id}");
    assert!(!id.contains(&token) && !token.contains(&id[4..]), "{id}");
    match store.check_session(&id).await.expect("check") {
        TokenCheck::Valid { tenant: t, .. } => assert_eq!(t.id, tenant.id),
        other => panic!("an open session: {other:?}"),
    }
    // The token itself is not a session id.
    assert!(matches!(
        store.check_session(&token).await.expect("check"),
        TokenCheck::Unknown
    ));
    // Logout ends it.
    store.close_session(&id).await.expect("close");
    assert!(matches!(
        store.check_session(&id).await.expect("check"),
        TokenCheck::Unknown
    ));
    // An expired one is over.
    let old = store
        .open_session(&token, -1)
        .await
        .expect("open")
        .expect("opened");
    assert!(matches!(
        store.check_session(&old).await.expect("check"),
        TokenCheck::Unknown
    ));
    // Revoking the token ends its sessions.
    let live = store
        .open_session(&token, 60)
        .await
        .expect("open")
        .expect("opened");
    store.revoke_tokens("acme", None).await.expect("revoke");
    assert!(matches!(
        store.check_session(&live).await.expect("check"),
        TokenCheck::Revoked
    ));
}
