"""Resource types the simulator serves: the built-in ones and those CRDs add."""

import re


class ResourceType:
    def __init__(self, group, versions, plural, kind, namespaced=True, short_names=(),
                 singular=None, status=False, categories=(), crd=None, storage_version=None,
                 list_kind=None):
        self.group = group
        self.versions = list(versions)
        self.storage_version = storage_version or self.versions[0]
        self.plural = plural
        self.kind = kind
        self.list_kind = list_kind or kind + 'List'
        self.namespaced = namespaced
        self.short_names = list(short_names)
        self.singular = singular or kind.lower()
        self.status = status          # has a /status subresource
        self.categories = list(categories)
        self.crd = crd                # the CRD object for custom resources

    @property
    def key(self):
        return (self.group, self.plural)

    def api_version(self, version=None):
        v = version or self.storage_version
        return '%s/%s' % (self.group, v) if self.group else v

    @property
    def qualified(self):
        """How error messages name the resource: pods, collectivetuningjobs.ccltune.io."""
        return '%s.%s' % (self.plural, self.group) if self.group else self.plural

    def crd_version(self, version):
        if not self.crd:
            return None
        for v in self.crd.get('spec', {}).get('versions', []):
            if v.get('name') == version:
                return v
        return None

    def schema(self, version):
        v = self.crd_version(version)
        if not v:
            return None
        return (v.get('schema') or {}).get('openAPIV3Schema')


VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

BUILTIN = [
    ResourceType('', ['v1'], 'namespaces', 'Namespace', namespaced=False, short_names=['ns'], status=True),
    ResourceType('', ['v1'], 'nodes', 'Node', namespaced=False, short_names=['no'], status=True),
    ResourceType('', ['v1'], 'pods', 'Pod', short_names=['po'], status=True, categories=['all']),
    ResourceType('', ['v1'], 'configmaps', 'ConfigMap', short_names=['cm']),
    ResourceType('', ['v1'], 'secrets', 'Secret'),
    ResourceType('', ['v1'], 'services', 'Service', short_names=['svc'], status=True, categories=['all']),
    ResourceType('', ['v1'], 'events', 'Event', short_names=['ev']),
    ResourceType('', ['v1'], 'serviceaccounts', 'ServiceAccount', short_names=['sa']),
    ResourceType('', ['v1'], 'persistentvolumeclaims', 'PersistentVolumeClaim', short_names=['pvc'], status=True),
    ResourceType('coordination.k8s.io', ['v1'], 'leases', 'Lease'),
    ResourceType('apiextensions.k8s.io', ['v1'], 'customresourcedefinitions', 'CustomResourceDefinition',
                 namespaced=False, short_names=['crd', 'crds'], status=True),
    ResourceType('apps', ['v1'], 'deployments', 'Deployment', short_names=['deploy'], status=True, categories=['all']),
    ResourceType('rbac.authorization.k8s.io', ['v1'], 'roles', 'Role'),
    ResourceType('rbac.authorization.k8s.io', ['v1'], 'rolebindings', 'RoleBinding'),
    ResourceType('rbac.authorization.k8s.io', ['v1'], 'clusterroles', 'ClusterRole', namespaced=False),
    ResourceType('rbac.authorization.k8s.io', ['v1'], 'clusterrolebindings', 'ClusterRoleBinding', namespaced=False),
    ResourceType('scheduling.k8s.io', ['v1'], 'priorityclasses', 'PriorityClass', namespaced=False, short_names=['pc']),
    ResourceType('admissionregistration.k8s.io', ['v1'], 'mutatingwebhookconfigurations',
                 'MutatingWebhookConfiguration', namespaced=False),
]

# Field selectors each built-in type accepts besides metadata.name / metadata.namespace.
FIELD_LABELS = {
    ('', 'pods'): {'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName',
                   'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'},
    ('', 'events'): {'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name',
                     'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion',
                     'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'},
    ('', 'secrets'): {'type'},
    ('', 'namespaces'): {'status.phase'},
    ('', 'nodes'): {'spec.unschedulable'},
}

NAME_RE = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')


def crd_to_type(crd):
    spec = crd.get('spec', {})
    names = spec.get('names', {})
    versions = [v['name'] for v in spec.get('versions', []) if v.get('served', True)]
    storage = next((v['name'] for v in spec.get('versions', []) if v.get('storage')), versions[0] if versions else None)
    status = any('status' in (v.get('subresources') or {}) for v in spec.get('versions', []))
    return ResourceType(spec.get('group'), versions, names.get('plural'), names.get('kind'),
                        namespaced=spec.get('scope', 'Namespaced') == 'Namespaced',
                        short_names=names.get('shortNames') or [], singular=names.get('singular'),
                        status=status, categories=names.get('categories') or [], crd=crd,
                        storage_version=storage, list_kind=names.get('listKind'))
