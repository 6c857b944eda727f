"""The API-server simulator checked with Debian's python3-kubernetes client:
CRUD, conflicts, status subresource, generation, watch (order, resume, 410, bookmarks,
selectors), finalizers, owner-reference cascade, patches, faults."""

import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sim'))

from simfixture import Simulator  # noqa: E402
from kubernetes import client, config, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

G, V, PL = 'ccltune.io', 'v1alpha1', 'collectivetuningjobs'
CRD_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sim', 'testdata', 'crd.yaml')


def ctj(name, world=2, labels=None):
    return {'apiVersion': '%s/%s' % (G, V), 'kind': 'CollectiveTuningJob',
            'metadata': {'name': name, 'labels': labels or {}}, 'spec': {'worldSize': world, 'gpusPerPod': 1}}


class SimApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sim = Simulator(extra_args=['--bookmark-interval', '0.5', '--history', '200']).start()
        cls.sim.kubectl('apply', '-f', CRD_PATH)
        cls.api = config.new_client_from_config(config_file=cls.sim.kubeconfig)
        cls.core = client.CoreV1Api(cls.api)
        cls.co = client.CustomObjectsApi(cls.api)
        cls.coord = client.CoordinationV1Api(cls.api)

    @classmethod
    def tearDownClass(cls):
        cls.api.close()
        cls.sim.stop()

    def status_of(self, exc):
        return json.loads(exc.body)

    # ---- audit log -----------------------------------------------------------
    def test_audit_log_records_each_request_with_its_client_verb_object_and_code(self):
        start = self.sim.control('GET', '/_sim/audit?since=0')['next']
        import urllib.request
        body = json.dumps({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'audited'}}).encode()
        req = urllib.request.Request(self.sim.url + '/api/v1/namespaces/default/configmaps', data=body, method='POST',
                                     headers={'Content-Type': 'application/json', 'User-Agent': 'auditee/1 (x)'})
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertEqual(r.status, 201)
            audit_id = r.headers['Audit-Id']
        self.core.read_namespaced_config_map('audited', 'default')
        got = self.sim.control('GET', '/_sim/audit?since=%d' % start)
        self.assertEqual(got['apiVersion'], 'audit.k8s.io/v1')
        mine = [e for e in got['items'] if e['userAgent'] == 'auditee/1 (x)']
        self.assertEqual(len(mine), 1, got['items'])
        ev = mine[0]
        self.assertEqual((ev['verb'], ev['stage'], ev['responseStatus']['code'], ev['auditID']),
                         ('create', 'ResponseComplete', 201, audit_id))
        self.assertEqual(ev['objectRef'], {'resource': 'configmaps', 'namespace': 'default', 'apiGroup': '',
                                           'apiVersion': 'v1'})
        gets = [e for e in got['items'] if e['verb'] == 'get' and e.get('objectRef', {}).get('name') == 'audited']
        self.assertEqual(len(gets), 1)
        self.assertGreaterEqual(got['next'], start + 2)
        self.assertEqual(self.sim.control('GET', '/_sim/audit?since=%d' % got['next'])['items'], [])

    # ---- CRUD --------------------------------------------------------------
    def test_crud_and_conflicts(self):
        cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name='c1', labels={'a': 'b'}), data={'k': 'v'})
        created = self.core.create_namespaced_config_map('default', cm)
        self.assertTrue(created.metadata.uid)
        self.assertTrue(created.metadata.creation_timestamp)
        rv1 = created.metadata.resource_version
        with self.assertRaises(ApiException) as e:
            self.core.create_namespaced_config_map('default', cm)
        self.assertEqual(e.exception.status, 409)
        st = self.status_of(e.exception)
        self.assertEqual((st['kind'], st['reason'], st['code']), ('Status', 'AlreadyExists', 409))
        self.assertEqual(st['message'], 'configmaps "c1" already exists')
        got = self.core.read_namespaced_config_map('c1', 'default')
        got.data['k'] = 'v2'
        upd = self.core.replace_namespaced_config_map('c1', 'default', got)
        self.assertGreater(int(upd.metadata.resource_version), int(rv1))
        stale = got
        stale.metadata.resource_version = rv1
        with self.assertRaises(ApiException) as e:
            self.core.replace_namespaced_config_map('c1', 'default', stale)
        st = self.status_of(e.exception)
        self.assertEqual((e.exception.status, st['reason']), (409, 'Conflict'))
        self.assertIn('the object has been modified; please apply your changes to the latest version and try again',
                      st['message'])
        # unconditional update (no resourceVersion) is allowed
        stale.metadata.resource_version = None
        self.core.replace_namespaced_config_map('c1', 'default', stale)
        with self.assertRaises(ApiException) as e:
            self.core.read_namespaced_config_map('nope', 'default')
        st = self.status_of(e.exception)
        self.assertEqual((e.exception.status, st['reason'], st['message']), (404, 'NotFound', 'configmaps "nope" not found'))
        with self.assertRaises(ApiException) as e:
            self.core.create_namespaced_config_map('no-such-ns', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='x')))
        self.assertEqual(e.exception.status, 404)
        with self.assertRaises(ApiException) as e:     # label values: at most 63 characters
            self.core.create_namespaced_config_map('default', client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name='lbl', labels={'ccltune.io/job': 'x' * 64})))
        self.assertEqual(e.exception.status, 422)
        self.assertIn('must be no more than 63 characters', self.status_of(e.exception)['message'])
        st = self.core.delete_namespaced_config_map('c1', 'default')
        self.assertEqual((st.kind, st.status, st.details.name, st.details.kind), ('Status', 'Success', 'c1', 'configmaps'))
        with self.assertRaises(ApiException):
            self.core.read_namespaced_config_map('c1', 'default')

    def test_status_subresource_and_generation(self):
        o = self.co.create_namespaced_custom_object(G, V, 'default', PL, dict(ctj('gen'), status={'phase': 'Bogus'}))
        self.assertEqual(o['metadata']['generation'], 1)
        self.assertNotIn('status', o)                  # status dropped on create
        o['status'] = {'phase': 'Running'}
        o['metadata'].setdefault('labels', {})['x'] = 'y'
        o2 = self.co.replace_namespaced_custom_object(G, V, 'default', PL, 'gen', o)
        self.assertNotIn('status', o2)                 # main resource ignores status
        self.assertEqual(o2['metadata']['generation'], 1)   # metadata change: no bump
        o2['status'] = {'phase': 'Running'}
        o2['spec']['worldSize'] = 99
        o3 = self.co.replace_namespaced_custom_object_status(G, V, 'default', PL, 'gen', o2)
        self.assertEqual(o3['status'], {'phase': 'Running'})
        self.assertEqual(o3['spec']['worldSize'], 2)   # /status ignores spec
        self.assertEqual(o3['metadata']['generation'], 1)
        o3['spec']['worldSize'] = 4
        no_rv = json.loads(json.dumps(o3))
        del no_rv['metadata']['resourceVersion']
        with self.assertRaises(ApiException) as e:      # custom resources need a resourceVersion on PUT
            self.co.replace_namespaced_custom_object(G, V, 'default', PL, 'gen', no_rv)
        self.assertEqual(e.exception.status, 422)
        self.assertIn('must be specified for an update', self.status_of(e.exception)['message'])
        o4 = self.co.replace_namespaced_custom_object(G, V, 'default', PL, 'gen', o3)
        self.assertEqual(o4['metadata']['generation'], 2)
        self.assertEqual(o4['status'], {'phase': 'Running'})
        # status write with a stale resourceVersion -> 409
        o3['status'] = {'phase': 'Failed'}
        with self.assertRaises(ApiException) as e:
            self.co.replace_namespaced_custom_object_status(G, V, 'default', PL, 'gen', o3)
        self.assertEqual(e.exception.status, 409)
        # merge patch on /status
        o5 = self.co.patch_namespaced_custom_object_status(G, V, 'default', PL, 'gen', {'status': {'attempt': 1}})
        self.assertEqual(o5['status'], {'phase': 'Running', 'attempt': 1})
        # merge patch with a stale resourceVersion is a precondition -> 409
        with self.assertRaises(ApiException) as e:
            self.co.patch_namespaced_custom_object(G, V, 'default', PL, 'gen',
                                                   {'metadata': {'resourceVersion': o3['metadata']['resourceVersion']},
                                                    'spec': {'worldSize': 8}})
        self.assertEqual(e.exception.status, 409)
        self.co.delete_namespaced_custom_object(G, V, 'default', PL, 'gen')

    def test_schema_validation(self):
        bad = ctj('bad', world=3)
        bad['spec']['gpusPerPod'] = 2
        bad['spec']['backend'] = 'foo'
        with self.assertRaises(ApiException) as e:
            self.co.create_namespaced_custom_object(G, V, 'default', PL, bad)
        st = self.status_of(e.exception)
        self.assertEqual((e.exception.status, st['reason']), (422, 'Invalid'))
        self.assertIn('spec.backend: Unsupported value: "foo"', st['message'])
        self.assertIn('worldSize must be a multiple of gpusPerPod', st['message'])
        o = self.co.create_namespaced_custom_object(G, V, 'default', PL, dict(ctj('dflt'), spec={'worldSize': 1, 'junk': 1}))
        self.assertEqual(o['spec'], {'worldSize': 1, 'gpusPerPod': 1, 'backend': 'host'})   # defaulted + pruned
        self.co.delete_namespaced_custom_object(G, V, 'default', PL, 'dflt')

    def test_list_selectors_and_paging(self):
        for i in range(5):
            self.co.create_namespaced_custom_object(G, V, 'default', PL, ctj('sel%d' % i, labels={'grp': 'g%d' % (i % 2), 'i': str(i)}))
        names = lambda r: sorted(x['metadata']['name'] for x in r['items'])  # noqa: E731
        r = self.co.list_namespaced_custom_object(G, V, 'default', PL, label_selector='grp=g0')
        self.assertEqual(names(r), ['sel0', 'sel2', 'sel4'])
        self.assertTrue(r['metadata']['resourceVersion'])
        self.assertEqual(names(self.co.list_namespaced_custom_object(G, V, 'default', PL, label_selector='grp!=g0,i')),
                         ['sel1', 'sel3'])
        self.assertEqual(names(self.co.list_namespaced_custom_object(G, V, 'default', PL, label_selector='i in (1, 4),grp')),
                         ['sel1', 'sel4'])
        self.assertEqual(names(self.co.list_namespaced_custom_object(G, V, 'default', PL, label_selector='i notin (0,1,2),grp==g1')),
                         ['sel3'])
        self.assertEqual(names(self.co.list_namespaced_custom_object(G, V, 'default', PL, label_selector='!grp')), [])
        self.assertEqual(names(self.co.list_namespaced_custom_object(G, V, 'default', PL, field_selector='metadata.name=sel3')),
                         ['sel3'])
        all_ = self.co.list_cluster_custom_object(G, V, PL, label_selector='grp')
        self.assertEqual(len(all_['items']), 5)
        page = self.co.list_namespaced_custom_object(G, V, 'default', PL, label_selector='grp', limit=2)
        got = names(page)
        while page['metadata'].get('continue'):
            page = self.co.list_namespaced_custom_object(G, V, 'default', PL, label_selector='grp', limit=2,
                                                         _continue=page['metadata']['continue'])
            got += names(page)
        self.assertEqual(sorted(got), ['sel%d' % i for i in range(5)])
        with self.assertRaises(ApiException) as e:
            self.co.list_namespaced_custom_object(G, V, 'default', PL, field_selector='spec.worldSize=2')
        self.assertEqual(e.exception.status, 400)
        for i in range(5):
            self.co.delete_namespaced_custom_object(G, V, 'default', PL, 'sel%d' % i)

    # ---- watch -------------------------------------------------------------
    def test_watch_order_resume_and_expired(self):
        lst = self.co.list_namespaced_custom_object(G, V, 'default', PL)
        rv0 = lst['metadata']['resourceVersion']
        self.co.create_namespaced_custom_object(G, V, 'default', PL, ctj('w1'))
        self.co.patch_namespaced_custom_object(G, V, 'default', PL, 'w1', {'spec': {'worldSize': 4}})
        self.co.patch_namespaced_custom_object_status(G, V, 'default', PL, 'w1', {'status': {'phase': 'Running'}})
        self.co.delete_namespaced_custom_object(G, V, 'default', PL, 'w1')
        w = watch.Watch()
        seen = []
        for ev in w.stream(self.co.list_namespaced_custom_object, G, V, 'default', PL, resource_version=rv0, timeout_seconds=2):
            seen.append((ev['type'], ev['object']['metadata']['name'], int(ev['object']['metadata']['resourceVersion'])))
            if len(seen) == 4:
                w.stop()
        self.assertEqual([s[0] for s in seen], ['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED'])
        rvs = [s[2] for s in seen]
        self.assertEqual(rvs, sorted(rvs))
        # resume from the second event: only the last two come back
        seen2 = []
        for ev in w.stream(self.co.list_namespaced_custom_object, G, V, 'default', PL, resource_version=str(rvs[1]),
                           timeout_seconds=1):
            seen2.append(ev['type'])
        self.assertEqual(seen2, ['MODIFIED', 'DELETED'])
        # compaction -> 410 Expired for the old resourceVersion, relist works
        self.sim.control('POST', '/_sim/compact')
        with self.assertRaises(ApiException) as e:
            for ev in watch.Watch().stream(self.co.list_namespaced_custom_object, G, V, 'default', PL,
                                           resource_version=rv0, timeout_seconds=2):
                pass
        self.assertEqual(e.exception.status, 410)
        fresh = self.co.list_namespaced_custom_object(G, V, 'default', PL)['metadata']['resourceVersion']
        got = []
        for ev in watch.Watch().stream(self.co.list_namespaced_custom_object, G, V, 'default', PL,
                                       resource_version=fresh, timeout_seconds=1):
            got.append(ev)
        self.assertEqual(got, [])

    def test_history_is_per_resource_type(self):
        rv = self.co.list_namespaced_custom_object(G, V, 'default', PL)['metadata']['resourceVersion']
        self.core.create_namespaced_config_map('default', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='churn'), data={'i': '0'}))
        for i in range(210):                     # more than --history 200 configmap events
            self.core.patch_namespaced_config_map('churn', 'default', {'data': {'i': str(i + 1)}})
        self.core.delete_namespaced_config_map('churn', 'default')
        evs = list(watch.Watch().stream(self.co.list_namespaced_custom_object, G, V, 'default', PL,
                                        resource_version=rv, timeout_seconds=1))
        self.assertEqual(evs, [])                # the CR history still covers rv
        with self.assertRaises(ApiException) as e:
            for _ in watch.Watch().stream(self.core.list_namespaced_config_map, 'default', resource_version=rv,
                                          timeout_seconds=1):
                pass
        self.assertEqual(e.exception.status, 410)

    def test_watch_raw_expired_event_and_bookmarks(self):
        lst = self.core.list_namespaced_config_map('default')
        rv = lst.metadata.resource_version
        self.sim.control('POST', '/_sim/compact')
        self.core.create_namespaced_config_map('default', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='bm')))
        r = self.core.list_namespaced_config_map('default', watch=True, resource_version=str(int(rv) - 1),
                                                 _preload_content=False)
        lines = [json.loads(x) for x in r.read().decode().splitlines() if x.strip()]
        self.assertEqual(len(lines), 1)
        self.assertEqual(lines[0]['type'], 'ERROR')
        self.assertEqual((lines[0]['object']['code'], lines[0]['object']['reason']), (410, 'Expired'))
        self.assertIn('too old resource version', lines[0]['object']['message'])
        # bookmarks: only kind/apiVersion/metadata.resourceVersion
        rv = self.core.list_namespaced_config_map('default').metadata.resource_version
        t0 = time.monotonic()
        r = self.core.list_namespaced_config_map('default', watch=True, resource_version=rv, allow_watch_bookmarks=True,
                                                 timeout_seconds=2, _preload_content=False)
        lines = [json.loads(x) for x in r.read().decode().splitlines() if x.strip()]
        self.assertGreaterEqual(time.monotonic() - t0, 1.5)          # timeoutSeconds honoured
        self.assertLess(time.monotonic() - t0, 5)
        bms = [x for x in lines if x['type'] == 'BOOKMARK']
        self.assertGreaterEqual(len(bms), 1)
        self.assertEqual(set(bms[0]['object'].keys()), {'kind', 'apiVersion', 'metadata'})
        self.assertEqual(list(bms[0]['object']['metadata'].keys()), ['resourceVersion'])
        self.core.delete_namespaced_config_map('bm', 'default')

    def test_watch_without_rv_sends_current_objects_and_selectors(self):
        self.co.create_namespaced_custom_object(G, V, 'default', PL, ctj('cur1', labels={'w': 'yes'}))
        self.co.create_namespaced_custom_object(G, V, 'default', PL, ctj('cur2', labels={'w': 'no'}))
        events = []
        done = threading.Event()

        def run():
            for ev in watch.Watch().stream(self.co.list_namespaced_custom_object, G, V, 'default', PL,
                                           label_selector='w=yes', timeout_seconds=3):
                events.append((ev['type'], ev['object']['metadata']['name']))
            done.set()
        t = threading.Thread(target=run)
        t.start()
        time.sleep(0.5)
        # cur2 enters the selector (ADDED), cur1 leaves it (DELETED)
        self.co.patch_namespaced_custom_object(G, V, 'default', PL, 'cur2', {'metadata': {'labels': {'w': 'yes'}}})
        self.co.patch_namespaced_custom_object(G, V, 'default', PL, 'cur1', {'metadata': {'labels': {'w': 'no'}}})
        t.join(10)
        self.assertEqual(events, [('ADDED', 'cur1'), ('ADDED', 'cur2'), ('DELETED', 'cur1')])
        self.co.delete_namespaced_custom_object(G, V, 'default', PL, 'cur1')
        self.co.delete_namespaced_custom_object(G, V, 'default', PL, 'cur2')

    # ---- deletion ----------------------------------------------------------
    def test_finalizers(self):
        o = ctj('fin')
        o['metadata']['finalizers'] = ['ccltune.io/cleanup']
        self.co.create_namespaced_custom_object(G, V, 'default', PL, o)
        d = self.co.delete_namespaced_custom_object(G, V, 'default', PL, 'fin')
        self.assertTrue(d['metadata'].get('deletionTimestamp'))
        cur = self.co.get_namespaced_custom_object(G, V, 'default', PL, 'fin')
        self.assertTrue(cur['metadata']['deletionTimestamp'])
        cur['metadata']['finalizers'] = []
        self.co.replace_namespaced_custom_object(G, V, 'default', PL, 'fin', cur)
        with self.assertRaises(ApiException) as e:
            self.co.get_namespaced_custom_object(G, V, 'default', PL, 'fin')
        self.assertEqual(e.exception.status, 404)

    def test_owner_reference_cascade(self):
        for policy in ('Background', 'Foreground'):
            owner = self.co.create_namespaced_custom_object(G, V, 'default', PL, ctj('own-' + policy.lower()))
            ref = client.V1OwnerReference(api_version='%s/%s' % (G, V), kind='CollectiveTuningJob',
                                          name=owner['metadata']['name'], uid=owner['metadata']['uid'],
                                          controller=True, block_owner_deletion=True)
            for i in range(2):
                self.core.create_namespaced_config_map('default', client.V1ConfigMap(
                    metadata=client.V1ObjectMeta(name='dep-%s-%d' % (policy.lower(), i), owner_references=[ref])))
            self.core.create_namespaced_config_map('default', client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name='indep-' + policy.lower())))
            self.co.delete_namespaced_custom_object(G, V, 'default', PL, owner['metadata']['name'],
                                                    body=client.V1DeleteOptions(propagation_policy=policy))
            self.sim.wait_for(lambda: not [c for c in self.core.list_namespaced_config_map('default').items
                                           if c.metadata.name.startswith('dep-' + policy.lower())], timeout=10)
            self.sim.wait_for(lambda: not [c for c in self.co.list_namespaced_custom_object(G, V, 'default', PL)['items']
                                           if c['metadata']['name'] == owner['metadata']['name']], timeout=10)
            self.core.read_namespaced_config_map('indep-' + policy.lower(), 'default')

    # ---- other types, faults -----------------------------------------------
    def test_lease_and_faults(self):
        lease = client.V1Lease(metadata=client.V1ObjectMeta(name='ccltune-leader'),
                               spec=client.V1LeaseSpec(holder_identity='a', lease_duration_seconds=15))
        created = self.coord.create_namespaced_lease('default', lease)
        self.sim.control('POST', '/_sim/faults', {'verb': 'update', 'resource': 'leases', 'code': 409, 'count': 2})
        created.spec.holder_identity = 'b'
        for _ in range(2):
            with self.assertRaises(ApiException) as e:
                self.coord.replace_namespaced_lease('ccltune-leader', 'default', created)
            self.assertEqual(e.exception.status, 409)
        self.assertEqual(self.coord.replace_namespaced_lease('ccltune-leader', 'default', created).spec.holder_identity, 'b')
        self.sim.control('POST', '/_sim/faults', {'verb': 'get', 'resource': 'leases', 'code': 500})
        with self.assertRaises(ApiException) as e:
            self.coord.read_namespaced_lease('ccltune-leader', 'default')
        self.assertEqual(e.exception.status, 500)
        self.coord.read_namespaced_lease('ccltune-leader', 'default')

    def test_secret_string_data_and_body_limit(self):
        s = self.core.create_namespaced_secret('default', client.V1Secret(metadata=client.V1ObjectMeta(name='pw'),
                                                                          string_data={'password': 'hunter2'}))
        self.assertEqual(s.data, {'password': 'aHVudGVyMg=='})
        big = client.V1ConfigMap(metadata=client.V1ObjectMeta(name='big'), data={'x': 'a' * (3 * 1024 * 1024 + 10)})
        with self.assertRaises(ApiException) as e:
            self.core.create_namespaced_config_map('default', big)
        self.assertEqual(e.exception.status, 413)


class CrdDeletionTest(unittest.TestCase):
    def test_crd_deletion_waits_for_custom_object_finalizers(self):
        with Simulator() as sim:
            sim.kubectl('apply', '-f', CRD_PATH)
            api = config.new_client_from_config(config_file=sim.kubeconfig)
            co = client.CustomObjectsApi(api)
            ext = client.ApiextensionsV1Api(api)
            o = ctj('held')
            o['metadata']['finalizers'] = ['ccltune.io/cleanup']
            co.create_namespaced_custom_object(G, V, 'default', PL, o)
            co.create_namespaced_custom_object(G, V, 'default', PL, ctj('free'))
            ext.delete_custom_resource_definition('collectivetuningjobs.ccltune.io')
            sim.control('POST', '/_sim/gc')
            crd = ext.read_custom_resource_definition('collectivetuningjobs.ccltune.io')
            self.assertTrue(crd.metadata.deletion_timestamp)
            items = co.list_namespaced_custom_object(G, V, 'default', PL)['items']
            self.assertEqual([i['metadata']['name'] for i in items], ['held'])
            self.assertTrue(items[0]['metadata']['deletionTimestamp'])
            with self.assertRaises(ApiException) as e:
                co.create_namespaced_custom_object(G, V, 'default', PL, ctj('late'))
            self.assertEqual(e.exception.status, 405)
            co.patch_namespaced_custom_object(G, V, 'default', PL, 'held', {'metadata': {'finalizers': None}})
            # kubectl lists the groups, then each group's resources: the CRD can go in between,
            # and kubectl then fails that one listing (as against a real API server). Wait for a
            # complete listing without the resource.
            def gone():
                r = sim.kubectl('api-resources', check=False)
                return r.returncode == 0 and 'collectivetuningjobs' not in r.stdout
            sim.wait_for(gone, timeout=10)
            api.close()


class SimTokenTest(unittest.TestCase):
    def test_token_required(self):
        with Simulator(token='s3cret') as sim:
            api = config.new_client_from_config(config_file=sim.kubeconfig)
            self.assertTrue(client.CoreV1Api(api).list_namespace().items)
            api.close()
            cfg = client.Configuration()
            cfg.host = sim.url
            cfg.api_key = {'authorization': 'Bearer wrong'}
            bad = client.ApiClient(cfg)
            with self.assertRaises(ApiException) as e:
                client.CoreV1Api(bad).list_namespace()
            self.assertEqual(e.exception.status, 401)
            bad.close()

    def test_https_with_generated_certificate(self):
        with Simulator(token='t0k', extra_args=['--https']) as sim:
            self.assertTrue(open(sim.kubeconfig).read().count('https://127.0.0.1:'))
            api = config.new_client_from_config(config_file=sim.kubeconfig)
            self.assertIn('default', [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items])
            api.close()
            self.assertIn('kube-system', sim.kubectl('get', 'namespaces').stdout)


if __name__ == '__main__':
    unittest.main()
